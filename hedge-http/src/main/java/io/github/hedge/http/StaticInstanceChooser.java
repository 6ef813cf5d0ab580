package io.github.hedge.http;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.spi.StallingTargets;
import io.github.hedge.core.spi.Ticker;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An {@link InstanceChooser} over fixed lists of instances, one list per service name: a request to
 * {@code http://users/api/1} goes to one of the instances listed for {@code users}. Requests to hosts
 * not listed go out unchanged.
 *
 * <ul>
 *   <li>A primary goes round-robin over the service's instances, skipping those that stall a share
 *       of their primaries ({@link StallingTargets}: judged against their peers over the last 10 s,
 *       re-read at most every 100 ms); when every instance stalls, it uses them all.
 *   <li>A hedge goes round-robin over the instances the call has not tried; when it has tried them
 *       all, over all of them.
 * </ul>
 *
 * An instance is identified in {@link AttemptContext#triedTargets()}, events and metrics by its
 * {@code host:port}. Thread-safe; the lists cannot change after {@link Builder#build()}.
 */
public final class StaticInstanceChooser implements InstanceChooser {
    private static final long STALLING_REFRESH_NANOS = Duration.ofMillis(100).toNanos();

    private final Map<String, Service> services;
    private final StallingTargets<String> stalling;
    private final Ticker ticker;
    private volatile Set<String> stallingNow = Set.of();
    private volatile long stallingReadAt = Long.MIN_VALUE;

    private record Service(List<URI> instances, List<String> targets, AtomicInteger next) {}

    private StaticInstanceChooser(Builder b) {
        Map<String, Service> m = new LinkedHashMap<>();
        b.services.forEach((name, list) -> {
            List<String> targets = new ArrayList<>();
            list.forEach(u -> targets.add(target(u)));
            m.put(name, new Service(List.copyOf(list), List.copyOf(targets), new AtomicInteger()));
        });
        this.services = Map.copyOf(m);
        this.ticker = b.ticker;
        this.stalling = new StallingTargets<>(Duration.ofSeconds(10), 30, b.ticker);
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public URI choose(URI requestUri, AttemptContext attempt) {
        String host = requestUri.getHost();
        Service service = host == null ? null : services.get(host.toLowerCase(Locale.ROOT));
        if (service == null) {
            return null;
        }
        List<String> tried = attempt.triedTargets();
        int n = service.instances.size();
        int start = Math.floorMod(service.next.getAndIncrement(), n);
        int chosen = -1;
        if (attempt.isHedge()) {
            if (!tried.isEmpty()) {
                stalling.primaryOverdue(tried.get(0));
            }
            chosen = pick(service, start, i -> !tried.contains(service.targets.get(i)));
        } else {
            Set<String> avoid = stallingNow();
            chosen = pick(service, start, i -> !avoid.contains(service.targets.get(i)));
        }
        if (chosen < 0) {
            chosen = start;
        }
        String target = service.targets.get(chosen);
        if (!attempt.isHedge()) {
            stalling.primaryPlaced(target);
        }
        attempt.reportTarget(target);
        return service.instances.get(chosen);
    }

    /** @return the instances judged stalling now, as {@code host:port} (a snapshot) */
    public Set<String> stallingInstances() {
        return stallingNow();
    }

    private Set<String> stallingNow() {
        long now = ticker.nanoTime();
        if (now - stallingReadAt >= STALLING_REFRESH_NANOS || stallingReadAt == Long.MIN_VALUE) {
            stallingNow = Set.copyOf(stalling.stalling());
            stallingReadAt = now;
        }
        return stallingNow;
    }

    private static int pick(Service s, int start, java.util.function.IntPredicate ok) {
        int n = s.instances.size();
        for (int k = 0; k < n; k++) {
            int i = (start + k) % n;
            if (ok.test(i)) {
                return i;
            }
        }
        return -1;
    }

    private static String target(URI u) {
        return u.getHost() + ":" + u.getPort();
    }

    /** Builds a chooser. Not thread-safe. */
    public static final class Builder {
        private final Map<String, List<URI>> services = new LinkedHashMap<>();
        private Ticker ticker = Ticker.system();

        private Builder() {}

        /**
         * @param name the service name, as the host of request URIs ({@code users} for {@code
         *     http://users/...}); case-insensitive
         * @param instances its instances' base URIs ({@code http://10.0.0.3:8080}), each with a scheme,
         *     host and port; at least one
         * @return this builder
         */
        public Builder service(String name, List<URI> instances) {
            Objects.requireNonNull(name, "name must not be null");
            Objects.requireNonNull(instances, "instances must not be null");
            if (instances.isEmpty()) {
                throw new IllegalArgumentException("instances of service " + name + " must not be empty");
            }
            for (URI u : instances) {
                if (u == null || u.getScheme() == null || u.getHost() == null || u.getPort() < 0) {
                    throw new IllegalArgumentException(
                            "instances of service " + name + " must be URIs with scheme, host and port, was " + u);
                }
            }
            services.put(name.toLowerCase(Locale.ROOT), List.copyOf(instances));
            return this;
        }

        /**
         * @param ticker the time source of the stalling judgement (tests)
         * @return this builder
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
            return this;
        }

        /** @return the chooser */
        public StaticInstanceChooser build() {
            return new StaticInstanceChooser(this);
        }
    }
}

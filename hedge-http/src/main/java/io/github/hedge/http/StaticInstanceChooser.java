package io.github.hedge.http;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.spi.StallingTargets;
import io.github.hedge.core.spi.Ticker;
import io.github.hedge.http.internal.Placement;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * An {@link InstanceChooser} over fixed lists of instances, one list per service name: a request to
 * {@code http://users/api/1} goes to one of the instances listed for {@code users}. Requests to hosts
 * not listed go out unchanged.
 *
 * <ul>
 *   <li>A primary goes round-robin over the service's instances, skipping those that stall a share
 *       of their primaries ({@link StallingTargets}: judged against the service's other instances over
 *       the last 10 s, re-read at most every 100 ms); when every instance stalls, it uses them all.
 *   <li>A hedge goes round-robin over the instances the call has not tried, skipping those judged
 *       stalling; failing that, over the untried ones; when it has tried them all, over all of them.
 * </ul>
 *
 * An instance is identified in {@link AttemptContext#triedTargets()}, events and metrics by its
 * {@code host:port}. Thread-safe; the lists cannot change after {@link Builder#build()}.
 */
public final class StaticInstanceChooser implements InstanceChooser {
    private final Map<String, Service> services;

    private record Service(List<URI> instances, List<String> targets, Placement placement) {}

    private StaticInstanceChooser(Builder b) {
        Map<String, Service> m = new LinkedHashMap<>();
        b.services.forEach((name, list) -> {
            List<String> targets = new ArrayList<>();
            list.forEach(u -> targets.add(target(u)));
            m.put(name, new Service(List.copyOf(list), List.copyOf(targets), new Placement(b.ticker)));
        });
        this.services = Map.copyOf(m);
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
        return service.instances.get(service.placement.place(service.targets, attempt));
    }

    /** @return the instances judged stalling now, as {@code host:port}, over every service (a snapshot) */
    public Set<String> stallingInstances() {
        Set<String> all = new java.util.HashSet<>();
        services.values().forEach(s -> all.addAll(s.placement.stallingNow()));
        return Set.copyOf(all);
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

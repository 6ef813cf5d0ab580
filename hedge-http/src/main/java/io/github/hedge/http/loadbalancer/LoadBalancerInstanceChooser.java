package io.github.hedge.http.loadbalancer;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.spi.StallingTargets;
import io.github.hedge.core.spi.Ticker;
import io.github.hedge.http.InstanceChooser;
import io.github.hedge.http.internal.Placement;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * An {@link InstanceChooser} over the instances Spring Cloud LoadBalancer knows: a request to {@code
 * lb://inventory/...}, or to {@code http://inventory/...} when {@code inventory} is one of the
 * {@linkplain Builder#serviceId service ids} given, goes to an instance of service {@code inventory},
 * as the {@link ServiceInstanceListSupplier} of that service (from the {@link
 * ReactiveLoadBalancer.Factory}, Spring Cloud's {@code LoadBalancerClientFactory}) lists them. Other
 * requests go out unchanged.
 *
 * <ul>
 *   <li>A primary goes round-robin over the instances, skipping those that stall a share of their
 *       primaries ({@link StallingTargets}: judged against the service's other instances over the
 *       last 10 s, re-read at most every 100 ms); when every instance stalls, it uses them all.
 *   <li>A hedge goes round-robin over the instances the call has not tried, skipping those judged
 *       stalling; failing that, over the untried ones; when it has tried them all, over all of them.
 * </ul>
 *
 * This replaces the load balancer's own choice (its round-robin or random {@code ReactorLoadBalancer})
 * for the requests it places: do not also mark the client {@code @LoadBalanced}. The supplier's filters
 * (health checks, zone preference, caching) still apply.
 *
 * <p>The instance list is read without blocking: each service's supplier is asked at most once a
 * second (default), and attempts use the last list it gave. Until the first list arrives (the first
 * request to a service starts the lookup, or {@link #prefetch}), requests to that service go out
 * unchanged. An instance is identified in {@link AttemptContext#triedTargets()}, events and metrics by
 * its {@code host:port}. Thread-safe.
 */
public final class LoadBalancerInstanceChooser implements InstanceChooser {
    private static final Logger log = LoggerFactory.getLogger(LoadBalancerInstanceChooser.class);

    /** The URI scheme that always names a service: {@code lb://inventory/stock}. */
    public static final String LB_SCHEME = "lb";

    private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;
    private final Set<String> serviceIds;
    private final Ticker ticker;
    private final long refreshNanos;
    private final Map<String, Service> services = new ConcurrentHashMap<>();

    private LoadBalancerInstanceChooser(Builder b) {
        this.factory = b.factory;
        this.serviceIds = Set.copyOf(b.serviceIds);
        this.ticker = b.ticker;
        this.refreshNanos = b.refresh.toNanos();
    }

    /**
     * @param factory Spring Cloud's {@code LoadBalancerClientFactory} (a bean of a Spring Cloud
     *     LoadBalancer application)
     * @return a builder
     */
    public static Builder builder(ReactiveLoadBalancer.Factory<ServiceInstance> factory) {
        return new Builder(factory);
    }

    @Override
    public URI choose(URI requestUri, AttemptContext attempt) {
        String serviceId = serviceId(requestUri);
        if (serviceId == null) {
            return null;
        }
        Service service = services.computeIfAbsent(serviceId, Service::new);
        Snapshot snapshot = service.current();
        if (snapshot == null || snapshot.targets.isEmpty()) {
            return null;
        }
        return snapshot.uris.get(service.placement.place(snapshot.targets, attempt));
    }

    /**
     * Starts reading the instance lists of these services now, so that their first requests find one.
     *
     * @param ids service ids
     */
    public void prefetch(Collection<String> ids) {
        ids.forEach(id -> services.computeIfAbsent(id, Service::new).current());
    }

    /**
     * @param serviceId a service id, as written in request URIs
     * @return the instances of that service judged stalling now, as {@code host:port} (a snapshot;
     *     empty for a service not called yet)
     */
    public Set<String> stallingInstances(String serviceId) {
        Service s = services.get(serviceId);
        return s == null ? Set.of() : s.placement.stallingNow();
    }

    /**
     * @param serviceId a service id
     * @return its instances as last read, as {@code host:port}; empty before the first list arrives
     */
    public List<String> instances(String serviceId) {
        Service s = services.get(serviceId);
        Snapshot snapshot = s == null ? null : s.snapshot;
        return snapshot == null ? List.of() : snapshot.targets;
    }

    private String serviceId(URI uri) {
        String host = uri.getHost();
        if (host == null) {
            return null;
        }
        return LB_SCHEME.equalsIgnoreCase(uri.getScheme()) || serviceIds.contains(host.toLowerCase(Locale.ROOT))
                ? host
                : null;
    }

    private record Snapshot(List<URI> uris, List<String> targets) {}

    /** One service: its last instance list, its placement state, its lookups. */
    private final class Service {
        final String id;
        final Placement placement = new Placement(ticker);
        final AtomicBoolean reading = new AtomicBoolean();
        volatile Snapshot snapshot;
        volatile long readAt;
        volatile ServiceInstanceListSupplier supplier;

        Service(String id) {
            this.id = id;
        }

        /** @return the last list; starts a new read when the last is older than the refresh interval */
        Snapshot current() {
            Snapshot s = snapshot;
            if ((s == null || ticker.nanoTime() - readAt >= refreshNanos) && reading.compareAndSet(false, true)) {
                read();
                s = snapshot;
            }
            return s;
        }

        private void read() {
            try {
                ServiceInstanceListSupplier sup = supplier;
                if (sup == null) {
                    Map<String, ServiceInstanceListSupplier> found =
                            factory.getInstances(id, ServiceInstanceListSupplier.class);
                    sup = found == null || found.isEmpty()
                            ? null
                            : found.values().iterator().next();
                    supplier = sup;
                }
                if (sup == null) {
                    log.warn("hedge: no ServiceInstanceListSupplier for a service; its requests go out unchanged");
                    readAt = ticker.nanoTime();
                    reading.set(false);
                    return;
                }
                sup.get()
                        .next()
                        .subscribe(
                                this::update,
                                e -> {
                                    log.debug("hedge: reading a service's instances failed; the last list stays", e);
                                    readAt = ticker.nanoTime();
                                    reading.set(false);
                                },
                                () -> reading.set(false));
            } catch (RuntimeException e) {
                log.debug("hedge: reading a service's instances failed; the last list stays", e);
                readAt = ticker.nanoTime();
                reading.set(false);
            }
        }

        private void update(List<ServiceInstance> list) {
            List<URI> uris = new ArrayList<>(list.size());
            List<String> targets = new ArrayList<>(list.size());
            for (ServiceInstance i : list) {
                URI uri = i.getUri();
                if (uri == null || uri.getHost() == null) {
                    continue;
                }
                int port = uri.getPort() >= 0 ? uri.getPort() : i.getPort();
                uris.add(uri);
                targets.add(uri.getHost() + ":" + port);
            }
            Snapshot old = snapshot;
            if (old != null) {
                Set<String> gone = new HashSet<>(old.targets);
                gone.removeAll(targets);
                gone.forEach(placement::forget);
            }
            snapshot = new Snapshot(List.copyOf(uris), List.copyOf(targets));
            readAt = ticker.nanoTime();
        }
    }

    /** Builds a chooser. Not thread-safe. */
    public static final class Builder {
        private final ReactiveLoadBalancer.Factory<ServiceInstance> factory;
        private final Set<String> serviceIds = new HashSet<>();
        private Ticker ticker = Ticker.system();
        private Duration refresh = Duration.ofSeconds(1);

        private Builder(ReactiveLoadBalancer.Factory<ServiceInstance> factory) {
            this.factory = Objects.requireNonNull(factory, "factory must not be null");
        }

        /**
         * @param id a service id whose {@code http://id/...} and {@code https://id/...} requests this
         *     chooser places ({@code lb://} requests are placed whatever their id); case-insensitive
         * @return this builder
         */
        public Builder serviceId(String id) {
            Objects.requireNonNull(id, "serviceId must not be null");
            if (id.isBlank()) {
                throw new IllegalArgumentException("serviceId must not be blank, was \"" + id + "\"");
            }
            serviceIds.add(id.trim().toLowerCase(Locale.ROOT));
            return this;
        }

        /**
         * @param interval how often each service's instance list is read again; in [10 ms, 1 h],
         *     default 1 s
         * @return this builder
         */
        public Builder refresh(Duration interval) {
            Objects.requireNonNull(interval, "refresh must not be null");
            if (interval.compareTo(Duration.ofMillis(10)) < 0 || interval.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("refresh must be in [10ms, 1h], was " + interval);
            }
            this.refresh = interval;
            return this;
        }

        /**
         * @param ticker the time source of the refresh and the stalling judgement (tests)
         * @return this builder
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
            return this;
        }

        /** @return the chooser */
        public LoadBalancerInstanceChooser build() {
            return new LoadBalancerInstanceChooser(this);
        }
    }
}

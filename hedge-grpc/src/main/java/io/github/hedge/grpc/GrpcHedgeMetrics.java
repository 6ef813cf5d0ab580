package io.github.hedge.grpc;

import io.github.hedge.core.micrometer.HedgeRegistryMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Micrometer meters for a {@link HedgingClientInterceptor}: the core's meters ({@code hedge.calls},
 * {@code hedge.attempts}, {@code hedge.hedges.sent}, {@code hedge.attempt.latency}, ... see {@code
 * HedgeMetrics}) for each method's executor, tagged {@code name=<full method name>} through {@link
 * HedgeRegistryMetrics} (following methods as they are first called), plus {@code
 * hedge.grpc.requests.too.large} (function counter, calls, tag {@code name}): calls not hedged
 * because their request was over the size limit. Optionally {@code hedge.grpc.server.shed} and
 * {@code hedge.grpc.server.hedges.in.flight} for a {@link HedgeSheddingServerInterceptor}.
 *
 * <p>Method names are low-cardinality (a service has a fixed set). Thread-safe; {@link #close()}
 * removes what it registered.
 */
public final class GrpcHedgeMetrics implements MeterBinder, AutoCloseable {
    private final HedgingClientInterceptor client;
    private final HedgeSheddingServerInterceptor server;
    private final HedgeRegistryMetrics executors;
    private final List<Meter> meters = new ArrayList<>();
    private final List<MeterRegistry> registries = new ArrayList<>();

    private GrpcHedgeMetrics(HedgingClientInterceptor client, HedgeSheddingServerInterceptor server) {
        this.client = client;
        this.server = server;
        this.executors = client != null ? HedgeRegistryMetrics.of(client.executors()) : null;
    }

    /**
     * @param client the interceptor
     * @return meters for its methods
     */
    public static GrpcHedgeMetrics of(HedgingClientInterceptor client) {
        return new GrpcHedgeMetrics(Objects.requireNonNull(client, "client must not be null"), null);
    }

    /**
     * @param server the shedding interceptor
     * @return meters for what it shed
     */
    public static GrpcHedgeMetrics of(HedgeSheddingServerInterceptor server) {
        return new GrpcHedgeMetrics(null, Objects.requireNonNull(server, "server must not be null"));
    }

    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        registries.add(registry);
        if (executors != null) {
            executors.bindTo(registry);
            // the too-large counters of methods seen so far, and the others as their executors appear
            for (String method : client.requestsTooLarge().keySet()) {
                tooLarge(registry, method);
            }
            client.executors().getEventPublisher().onEntryAdded(e -> {
                synchronized (GrpcHedgeMetrics.this) {
                    if (registries.contains(registry)) {
                        tooLarge(registry, e.getAddedEntry().name());
                    }
                }
            });
        }
        if (server != null) {
            meters.add(
                    FunctionCounter.builder("hedge.grpc.server.shed", server, HedgeSheddingServerInterceptor::shedCount)
                            .description("hedge attempts the server did not answer (over the concurrency limit)")
                            .baseUnit("attempts")
                            .register(registry));
            meters.add(io.micrometer.core.instrument.Gauge.builder(
                            "hedge.grpc.server.hedges.in.flight",
                            server,
                            HedgeSheddingServerInterceptor::hedgesInFlight)
                    .description("hedge attempts being served")
                    .register(registry));
        }
    }

    private void tooLarge(MeterRegistry registry, String method) {
        meters.add(FunctionCounter.builder("hedge.grpc.requests.too.large", client, c -> c.requestsTooLarge()
                        .getOrDefault(method, 0L)
                        .doubleValue())
                .description("calls not hedged because the request was larger than maxHedgedRequestBytes")
                .baseUnit("calls")
                .tags(Tags.of("name", method))
                .register(registry));
    }

    @Override
    public synchronized void close() {
        if (executors != null) {
            executors.close();
        }
        for (MeterRegistry r : registries) {
            for (Meter m : meters) {
                r.remove(m);
            }
        }
        meters.clear();
        registries.clear();
    }
}

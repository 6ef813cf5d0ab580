package io.github.hedge.benchmarks.grpc;

import io.github.hedge.grpc.HedgeLoadBalancerProvider;
import io.github.hedge.grpc.HedgingClientInterceptor;
import io.grpc.EquivalentAddressGroup;
import io.grpc.ManagedChannel;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.StatusOr;
import io.grpc.netty.NettyChannelBuilder;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The clients of {@link GrpcHedgeBench}: a static name resolver for the backends and one channel
 * per mode (no hedging, grpc-java's native hedging, hedge-grpc).
 */
final class BenchClients {
    private BenchClients() {}

    static final Map<String, List<InetSocketAddress>> TARGETS = new ConcurrentHashMap<>();

    static void registerResolver() {
        NameResolverRegistry.getDefaultRegistry().register(new NameResolverProvider() {
            @Override
            protected boolean isAvailable() {
                return true;
            }

            @Override
            protected int priority() {
                return 5;
            }

            @Override
            public String getDefaultScheme() {
                return "benchstatic";
            }

            @Override
            public NameResolver newNameResolver(URI uri, NameResolver.Args args) {
                if (!"benchstatic".equals(uri.getScheme())) {
                    return null;
                }
                List<InetSocketAddress> addrs = TARGETS.get(uri.getPath().substring(1));
                return new NameResolver() {
                    @Override
                    public String getServiceAuthority() {
                        return "bench";
                    }

                    @Override
                    public void start(Listener2 listener) {
                        List<EquivalentAddressGroup> groups = new ArrayList<>();
                        for (InetSocketAddress a : addrs) {
                            groups.add(new EquivalentAddressGroup(a));
                        }
                        listener.onResult(ResolutionResult.newBuilder()
                                .setAddressesOrError(StatusOr.fromValue(groups))
                                .build());
                    }

                    @Override
                    public void shutdown() {}
                };
            }
        });
    }

    // ------------------------------------------------------------------ clients

    enum Mode {
        NONE,
        NATIVE,
        HEDGE
    }

    /** The interceptor of the latest hedge-grpc run, for its stats. */
    static volatile HedgingClientInterceptor lastInterceptor;

    static ManagedChannel channel(Mode mode, double nativeDelayMs) {
        NettyChannelBuilder b =
                NettyChannelBuilder.forTarget("benchstatic:///bench").usePlaintext();
        switch (mode) {
            case NONE:
                b.defaultLoadBalancingPolicy("round_robin");
                break;
            case NATIVE:
                Map<String, Object> hedging = new LinkedHashMap<>();
                hedging.put("maxAttempts", 2.0);
                hedging.put("hedgingDelay", String.format(Locale.ROOT, "%.6fs", nativeDelayMs / 1000.0));
                hedging.put("nonFatalStatusCodes", List.of("UNAVAILABLE"));
                Map<String, Object> method = new LinkedHashMap<>();
                method.put("name", List.of(Map.of("service", "hedge.bench.Bench")));
                method.put("hedgingPolicy", hedging);
                Map<String, Object> config = new LinkedHashMap<>();
                config.put("methodConfig", List.of(method));
                config.put("loadBalancingConfig", List.of(Map.of("round_robin", Map.of())));
                b.defaultServiceConfig(config).enableRetry();
                break;
            case HEDGE:
            default:
                lastInterceptor = HedgingClientInterceptor.ofDefaults();
                b.defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME)
                        .intercept(lastInterceptor);
                break;
        }
        return b.build();
    }
}

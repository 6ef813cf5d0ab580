package io.github.hedge.examples.grpc;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.examples.demo.DemoBackends;
import io.github.hedge.examples.demo.DemoService;
import io.github.hedge.grpc.HedgeLoadBalancerProvider;
import io.github.hedge.grpc.HedgingClientInterceptor;
import io.github.hedge.grpc.MethodPolicy;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * hedge-grpc on a client channel: the {@link HedgingClientInterceptor} hedges unary calls of
 * idempotent methods, the {@code hedge_round_robin} balancer sends each hedge to a backend the call
 * has not tried, and per-method policies override the channel's defaults. With generated stubs,
 * mark read methods {@code option idempotency_level = NO_SIDE_EFFECTS;} in the .proto instead of
 * {@code MethodPolicy.idempotent(true)}.
 */
public final class GrpcClientExample {
    private GrpcClientExample() {}

    /**
     * One interceptor per channel: it holds the channel's hedge budget.
     *
     * @return the interceptor with the example's per-method settings
     */
    public static HedgingClientInterceptor hedging() {
        return HedgingClientInterceptor.builder()
                // every method: hedge after the p95 of its recent latency, at most 5% extra attempts
                .defaults(HedgeConfig.builder()
                        .maxExtraLoad(0.05)
                        .deadline(Duration.ofSeconds(2))
                        .build())
                // the whole service: up to 3 attempts per call
                .method(
                        "hedge.demo.Demo/*",
                        MethodPolicy.builder().maxAttempts(3).build())
                // one method: hedge earlier, after its p90 (the most specific pattern wins and
                // policies are not merged, so it restates maxAttempts)
                .method(
                        "hedge.demo.Demo/Get",
                        MethodPolicy.builder()
                                .delay(DelayPolicy.percentile(0.9).build())
                                .maxAttempts(3)
                                .build())
                // writes: never hedged, left untouched
                .method("hedge.demo.Demo/Put", MethodPolicy.disabled())
                .build();
    }

    /**
     * @param target a target that resolves to every replica, e.g. "dns:///users.internal:443"
     * @param hedging the channel's interceptor
     * @return a plaintext channel with the balancer and the interceptor
     */
    public static ManagedChannel channel(String target, HedgingClientInterceptor hedging) {
        return NettyChannelBuilder.forTarget(target)
                .usePlaintext()
                .defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME) // "hedge_round_robin"
                .intercept(hedging)
                .build();
    }

    /**
     * Calls the demo's replicas 200 times and prints the Get executor's counters.
     *
     * @param args unused
     * @throws Exception if the backends cannot start
     */
    public static void main(String[] args) throws Exception {
        try (DemoBackends backends = DemoBackends.start(2, 20, 1)) {
            HedgingClientInterceptor hedging = hedging();
            ManagedChannel channel = channel(DemoService.target(backends.addresses()), hedging);
            try {
                for (int i = 0; i < 200; i++) {
                    ClientCalls.blockingUnaryCall(
                            channel, DemoService.method(DemoService.METHOD, true), CallOptions.DEFAULT, new byte[0]);
                }
                System.out.println(
                        hedging.executor(DemoService.METHOD).orElseThrow().stats());
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}

package io.github.hedge.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.grpc.Backends.Action;
import io.github.hedge.grpc.test.EchoGrpc;
import io.github.hedge.grpc.test.EchoRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Meters tagged by method, from real calls. */
@Timeout(120) // a hung call fails the test instead of the build
class GrpcHedgeMetricsTest {
    @Test
    void should_publish_meters_tagged_by_method_when_calls_are_hedged() throws Exception {
        try (Backends backends = new Backends(3)) {
            backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 2_000 : 1));
            HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                    .defaults(HedgeConfig.builder()
                            .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                            .budget(HedgeBudget.unlimited())
                            .build())
                    .maxHedgedRequestBytes(100)
                    .build();
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            GrpcHedgeMetrics metrics = GrpcHedgeMetrics.of(hedging);
            metrics.bindTo(registry);
            ManagedChannel ch = NettyChannelBuilder.forTarget(backends.target())
                    .usePlaintext()
                    .defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME)
                    .intercept(hedging)
                    .build();
            try {
                EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(ch);
                stub.get(EchoRequest.newBuilder().setText("m1").build());
                stub.put(EchoRequest.newBuilder().setText("m2").build());
                stub.get(EchoRequest.newBuilder()
                        .setText("big")
                        .setPayload(ByteString.copyFrom(new byte[500]))
                        .build());

                assertThat(registry.get("hedge.calls")
                                .tag("name", "hedge.test.Echo/Get")
                                .tag("outcome", "success")
                                .counter()
                                .count())
                        .isEqualTo(1.0);
                assertThat(registry.get("hedge.hedges.won")
                                .tag("name", "hedge.test.Echo/Put")
                                .counter()
                                .count())
                        .isEqualTo(1.0);
                assertThat(registry.get("hedge.grpc.requests.too.large")
                                .tag("name", "hedge.test.Echo/Get")
                                .functionCounter()
                                .count())
                        .isEqualTo(1.0);
                metrics.close();
                assertThat(registry.find("hedge.calls").meters()).isEmpty();
                assertThat(registry.find("hedge.grpc.requests.too.large").meters())
                        .isEmpty();
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}

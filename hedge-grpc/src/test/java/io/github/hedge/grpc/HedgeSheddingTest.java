package io.github.hedge.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.grpc.Backends.Action;
import io.github.hedge.grpc.test.EchoGrpc;
import io.github.hedge.grpc.test.EchoRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shedding server interceptor on real backends: a shed hedge is never answered, the primary is. */
@Timeout(120) // a hung call fails the test instead of the build
class HedgeSheddingTest {
    @Test
    void should_let_the_client_wait_for_its_primary_without_error_when_the_server_sheds_the_hedge() throws Exception {
        HedgeSheddingServerInterceptor shedding = HedgeSheddingServerInterceptor.maxConcurrentHedges(0);
        try (Backends backends = new Backends(3, shedding)) {
            backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 250 : 1));
            HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                    .defaults(HedgeConfig.builder()
                            .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                            .budget(HedgeBudget.unlimited())
                            .build())
                    .build();
            ManagedChannel ch = NettyChannelBuilder.forTarget(backends.target())
                    .usePlaintext()
                    .defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME)
                    .intercept(hedging)
                    .build();
            try {
                EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(ch);
                for (int i = 0; i < 5; i++) {
                    // every call: the primary answers after 250 ms, its hedge is shed (never answered)
                    assertThat(stub.withDeadlineAfter(10, TimeUnit.SECONDS)
                                    .get(EchoRequest.newBuilder()
                                            .setText("shed-" + i)
                                            .build())
                                    .getAttempt())
                            .isEqualTo(1);
                }
                assertThat(shedding.shedCount()).isEqualTo(5);
                assertThat(shedding.admittedCount()).isZero();
                assertThat(backends.executions).allMatch(e -> e.attempt == 1);
                assertThat(hedging.executor("hedge.test.Echo/Get")
                                .orElseThrow()
                                .stats()
                                .hedgesSent())
                        .isEqualTo(5);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void should_serve_hedges_under_the_limit_and_release_the_slot_when_they_end() throws Exception {
        HedgeSheddingServerInterceptor shedding = HedgeSheddingServerInterceptor.maxConcurrentHedges(1);
        try (Backends backends = new Backends(3, shedding)) {
            backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 250 : 1));
            HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                    .defaults(HedgeConfig.builder()
                            .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                            .budget(HedgeBudget.unlimited())
                            .build())
                    .build();
            ManagedChannel ch = NettyChannelBuilder.forTarget(backends.target())
                    .usePlaintext()
                    .defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME)
                    .intercept(hedging)
                    .build();
            try {
                EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(ch);
                for (int i = 0; i < 3; i++) {
                    assertThat(stub.get(EchoRequest.newBuilder()
                                            .setText("ok-" + i)
                                            .build())
                                    .getAttempt())
                            .isEqualTo(2);
                    // the server learns that a call completed a moment after the client has its
                    // answer: the next call's hedge finds the slot free once it has
                    await().atMost(GrpcHedgingTest.SERVER_WAIT)
                            .untilAsserted(() -> assertThat(shedding.hedgesInFlight())
                                    .as("hedges in flight on the server")
                                    .isZero());
                }
                assertThat(shedding.shedCount()).isZero();
                assertThat(shedding.admittedCount()).isEqualTo(3);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}

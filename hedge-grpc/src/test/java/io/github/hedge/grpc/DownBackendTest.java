package io.github.hedge.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.grpc.Backends.Action;
import io.github.hedge.grpc.test.EchoGrpc;
import io.github.hedge.grpc.test.EchoReply;
import io.github.hedge.grpc.test.EchoRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One of three real backends goes down while the channel is in use. */
@Timeout(120) // a hung call fails the test instead of the build
class DownBackendTest {
    @Test
    void should_answer_every_call_from_the_live_backends_when_one_backend_goes_down() throws Exception {
        try (Backends backends = new Backends(3)) {
            backends.behave((b, m, r, a) -> Action.reply(1));
            HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                    .defaults(HedgeConfig.builder()
                            .delay(DelayPolicy.fixed(Duration.ofMillis(50)))
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
                Set<String> seen = new HashSet<>();
                for (int i = 0; i < 200 && seen.size() < 3; i++) {
                    seen.add(stub.get(EchoRequest.newBuilder().setText("up").build())
                            .getBackend());
                }
                assertThat(seen).hasSize(3);

                backends.servers.get(0).shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                for (int i = 0; i < 30; i++) {
                    EchoReply reply = stub.withDeadlineAfter(10, TimeUnit.SECONDS)
                            .get(EchoRequest.newBuilder().setText("down-" + i).build());
                    assertThat(reply.getBackend()).isNotEqualTo("b0");
                }
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}

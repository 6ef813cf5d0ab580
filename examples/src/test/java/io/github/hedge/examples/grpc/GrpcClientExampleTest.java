package io.github.hedge.examples.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.HedgeStats;
import io.github.hedge.examples.demo.DemoBackends;
import io.github.hedge.examples.demo.DemoService;
import io.github.hedge.grpc.HedgingClientInterceptor;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GrpcClientExampleTest {
    @Test
    void should_hedge_get_through_its_own_executor_and_leave_put_untouched_when_configured_per_method()
            throws Exception {
        try (DemoBackends backends = DemoBackends.start(1, 30, 3)) {
            HedgingClientInterceptor hedging = GrpcClientExample.hedging();
            ManagedChannel channel = GrpcClientExample.channel(DemoService.target(backends.addresses()), hedging);
            try {
                for (int i = 0; i < 100; i++) {
                    assertThat(ClientCalls.blockingUnaryCall(
                                    channel,
                                    DemoService.method(DemoService.METHOD, true),
                                    CallOptions.DEFAULT,
                                    new byte[0]))
                            .hasSize(1);
                }
                assertThat(hedging.executor(DemoService.METHOD)).isPresent();
                HedgeStats stats = hedging.executor(DemoService.METHOD).get().stats();
                assertThat(stats.successes()).isEqualTo(100);
                // replica 3 stalls 30% of its calls for 40-250 ms: hedges go out and some win
                assertThat(stats.hedgesWon()).as("hedges won").isPositive();
                // counted at the servers: every call, and every hedge that won, reached one
                long served = Arrays.stream(backends.received()).sum();
                assertThat(served).isBetween(100 + stats.hedgesWon(), stats.attempts());
                assertThat(hedging.executor(DemoService.METHOD).get().config().maxAttempts())
                        .isEqualTo(3);
                // Put is disabled: not handled by hedge at all (the demo backends do not serve it)
                assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(
                                channel,
                                DemoService.method("hedge.demo.Demo/Put", true),
                                CallOptions.DEFAULT,
                                new byte[0]))
                        .isInstanceOfSatisfying(
                                StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
                assertThat(hedging.executor("hedge.demo.Demo/Put")).isEmpty();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}

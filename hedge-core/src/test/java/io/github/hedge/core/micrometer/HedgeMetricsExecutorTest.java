package io.github.hedge.core.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The binder on a real executor in virtual time: what the executor does is what the meters say. */
class HedgeMetricsExecutorTest {

    @Test
    void should_count_calls_hedges_and_gauges_when_bound_to_real_executor() {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = HedgedExecutor.of(
                "orders",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .budget(HedgeBudget.unlimited())
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .build());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (HedgeMetrics metrics = HedgeMetrics.of(ex)) {
            metrics.bindTo(registry);
            // one call answered by its primary, one won by a hedge
            ex.executeAsync(ctx -> CompletableFuture.completedFuture("fast")).join();
            CompletableFuture<String> slow = new CompletableFuture<>();
            CompletableFuture<String> call = ex.executeAsync(
                    ctx -> ctx.attemptNumber() == 1 ? slow : CompletableFuture.completedFuture("hedge"));
            time.advance(Duration.ofMillis(10));
            assertThat(call.join()).isEqualTo("hedge");
            assertThat(slow).isCancelled();

            assertThat(registry.get("hedge.calls")
                            .tag("name", "orders")
                            .tag("outcome", "success")
                            .counter()
                            .count())
                    .isEqualTo(2);
            assertThat(registry.get("hedge.hedges.sent")
                            .tag("reason", "delay_elapsed")
                            .counter()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("hedge.hedges.won").counter().count()).isEqualTo(1);
            assertThat(registry.get("hedge.attempts")
                            .tag("kind", "primary")
                            .tag("outcome", "cancelled")
                            .counter()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("hedge.delay.current").timeGauge().value(TimeUnit.MILLISECONDS))
                    .isEqualTo(10.0);
            assertThat(registry.get("hedge.calls.in.flight").gauge().value()).isZero();
        }
        assertThat(registry.find("hedge.calls").meters()).isEmpty();
    }
}

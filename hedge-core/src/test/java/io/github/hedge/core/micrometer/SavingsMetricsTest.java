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

/** The binder publishes {@code HedgedExecutor.savings()}: hedged latency beside the unhedged estimate. */
class SavingsMetricsTest {

    @Test
    void should_publish_hedged_and_estimated_unhedged_latency_and_its_support_when_bound_to_an_executor() {
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
        try (HedgeMetrics metrics = HedgeMetrics.of(ex)) { // savings gauges are on by default
            metrics.bindTo(registry);
            // every tenth primary would take 200 ms; its hedge answers in 2 ms, at 12 ms
            for (int i = 0; i < 1000; i++) {
                boolean slow = i % 10 == 0;
                ex.executeAsync(ctx -> {
                    CompletableFuture<String> f = new CompletableFuture<>();
                    long ms = ctx.isHedge() ? 2 : slow ? 200 : 5;
                    var t = time.schedule(() -> f.complete("ok"), ms * 1_000_000L);
                    ctx.onCancel(t::cancel);
                    return f;
                });
                time.advance(Duration.ofMillis(20));
            }
            time.advance(Duration.ofSeconds(2));

            double hedgedP99 = registry.get("hedge.latency.hedged")
                    .tag("name", "orders")
                    .tag("percentile", "0.99")
                    .timeGauge()
                    .value(TimeUnit.MILLISECONDS);
            double unhedgedP99 = registry.get("hedge.latency.unhedged.estimated")
                    .tag("percentile", "0.99")
                    .timeGauge()
                    .value(TimeUnit.MILLISECONDS);
            assertThat(hedgedP99).isBetween(11.0, 13.0);
            // every slow primary was cancelled at 12 ms: the estimate cannot see 200 ms, so it
            // reports none (NaN) rather than a guess
            assertThat(unhedgedP99).isNaN();
            double unhedgedP50 = registry.get("hedge.latency.unhedged.estimated")
                    .tag("percentile", "0.5")
                    .timeGauge()
                    .value(TimeUnit.MILLISECONDS);
            assertThat(unhedgedP50).isBetween(4.9, 5.1);
            assertThat(ex.savings().censoredPrimaries()).isEqualTo(100);
            // ... and says so: the p99 estimate is unsupported, the p50 one is measured
            assertThat(supported(registry, "0.99")).isZero();
            assertThat(supported(registry, "0.5")).isEqualTo(1.0);
        }
    }

    private static double supported(SimpleMeterRegistry registry, String percentile) {
        return registry.get("hedge.latency.unhedged.supported")
                .tag("name", "orders")
                .tag("percentile", percentile)
                .gauge()
                .value();
    }
}

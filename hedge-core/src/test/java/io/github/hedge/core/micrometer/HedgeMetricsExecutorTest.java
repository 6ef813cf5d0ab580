package io.github.hedge.core.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.SplittableRandom;
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

    /**
     * The meters and {@link HedgedExecutor#stats()} give each count one meaning: over a random
     * workload with a scarce budget (hedges waiting for tokens, some getting one, some refused for
     * good), failing attempts and retries, every counter the two share agrees exactly.
     */
    @Test
    void should_agree_with_the_executors_stats_when_a_random_workload_runs_short_of_budget() {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = HedgedExecutor.of(
                "random",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .maxAttempts(3)
                        .budget(HedgeBudget.builder().ratio(0.03).ticker(time).build())
                        .delay(DelayPolicy.fixed(Duration.ofMillis(8)))
                        .build());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SplittableRandom rnd = new SplittableRandom(7);
        try (HedgeMetrics metrics = HedgeMetrics.of(ex)) {
            metrics.bindTo(registry);
            for (int i = 0; i < 50_000; i++) {
                ex.executeAsync(ctx -> {
                    CompletableFuture<String> f = new CompletableFuture<>();
                    double u = rnd.nextDouble();
                    long ms = u < 0.9 ? 2 + rnd.nextInt(6) : 10 + rnd.nextInt(200); // 10% slow
                    boolean fail = rnd.nextDouble() < 0.05;
                    ScheduledTask task = time.schedule(
                            () -> {
                                if (fail) {
                                    f.completeExceptionally(new IllegalStateException("unavailable"));
                                } else {
                                    f.complete("ok");
                                }
                            },
                            ms * 1_000_000L);
                    ctx.onCancel(task::cancel);
                    return f;
                });
                time.advanceNanos(1_000_000L + rnd.nextInt(1_000_000)); // ~670 calls/s
            }
            time.advance(Duration.ofSeconds(1));

            HedgeStats stats = ex.stats();
            assertThat(stats.inFlightCalls()).isZero();
            assertThat(stats.budgetDenied()).as("hedges refused for good").isGreaterThan(100);
            assertThat(registry.get("hedge.hedges.sent")
                            .tag("reason", "budget_deferred")
                            .counter()
                            .count())
                    .as("hedges that waited for a token and got one")
                    .isGreaterThan(100);
            assertThat(registry.get("hedge.budget.denied").counter().count()).isEqualTo(stats.budgetDenied());
            assertThat(sum(registry, "hedge.hedges.sent")).isEqualTo(stats.hedgesSent());
            assertThat(registry.get("hedge.hedges.won").counter().count()).isEqualTo(stats.hedgesWon());
            assertThat(sum(registry, "hedge.calls")).isEqualTo(stats.calls());
            assertThat(registry.get("hedge.calls")
                            .tag("outcome", "failure")
                            .counter()
                            .count())
                    .isEqualTo(stats.failures());
            assertThat(sum(registry, "hedge.attempts")).isEqualTo(stats.attempts());
        }
    }

    private static double sum(SimpleMeterRegistry registry, String name) {
        return registry.find(name).counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }
}

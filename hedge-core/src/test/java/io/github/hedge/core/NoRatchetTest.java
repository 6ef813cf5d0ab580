package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Scylla #3746: tracking hedged end-to-end latency makes the percentile climb until hedging
 * stops. The executor records each attempt's own latency, so the delay does not climb on its own
 * hedges: when a slow target recovers, the delay returns to the healthy one. While one target of
 * three is 10x slower, every call on it is past the healthy targets' p95, more than a 5% budget
 * pays for; budget feedback then raises the delay to the pooled percentile the budget pays for,
 * and no further.
 */
class NoRatchetTest {
    private static final long MS = 1_000_000L;

    @Test
    void should_return_to_the_healthy_delay_and_stay_within_the_budget_when_one_of_three_targets_was_10x_slower() {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = HedgedExecutor.of(
                "shift",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .maxExtraLoad(0.05)
                        .latencyTracker(LatencyTracker.builder()
                                .ticker(time)
                                .window(Duration.ofSeconds(10))
                                .build())
                        .budget(HedgeBudget.builder().ratio(0.05).ticker(time).build())
                        .build());
        SplittableRandom rnd = new SplittableRandom(7);
        String[] replicas = {"r0", "r1", "r2"};
        boolean[] slow = {false};
        long healthyDelay = -1;
        long maxDelayDuringSlowdown = -1;
        double maxOverBound = 0;
        long recoveredDelay = -1;
        long tick = MS; // one call per virtual millisecond
        for (int i = 0; i < 120_000; i++) {
            long now = time.nanoTime();
            slow[0] = now >= 40_000 * MS && now < 100_000 * MS;
            int callIndex = i;
            ex.executeAsync(ctx -> {
                // round-robin primary, hedges go to the next replica not yet tried
                String target = replicas[(callIndex + ctx.attemptNumber() - 1) % 3];
                ctx.reportTarget(target);
                double latency = Math.exp(rnd.nextGaussian() * 0.5) * 2.0; // ms, lognormal around 2 ms
                if (slow[0] && target.equals("r2")) {
                    latency *= 10;
                }
                CompletableFuture<String> f = new CompletableFuture<>();
                var task = time.schedule(() -> f.complete("ok"), (long) (latency * MS));
                ctx.onCancel(task::cancel);
                return f;
            });
            time.advanceNanos(tick);
            if (i == 39_999) {
                healthyDelay = ex.currentDelayNanos();
            }
            if (slow[0]) {
                long d = ex.currentDelayNanos();
                maxDelayDuringSlowdown = Math.max(maxDelayDuringSlowdown, d);
                // the budget's floor: the pooled p95 with a full budget, p96 (80% of what it pays
                // for) while it runs low; the healthy targets' own percentile the feedback aims at
                // while the budget runs low may lie a little above it (at most their p98)
                LatencyTracker t = ex.latencyTracker();
                long bound = Math.max(t.percentileNanos(0.96), t.consensusTargetPercentileNanos(0.98, 250));
                maxOverBound = Math.max(maxOverBound, (double) d / bound);
            }
            if (i == 119_999) {
                recoveredDelay = ex.currentDelayNanos(); // 20 s after the slowdown, two windows
            }
        }
        time.runUntilIdle();
        assertThat(healthyDelay).isPositive();
        assertThat(maxDelayDuringSlowdown).isGreaterThan(healthyDelay);
        assertThat(maxOverBound)
                .as("during the slowdown, the delay is at most what the budget pays for")
                .isLessThanOrEqualTo(1.0);
        assertThat((double) recoveredDelay / healthyDelay)
                .as("no ratchet: back to the healthy delay once the slow target recovered")
                .isBetween(0.8, 1.2);
        HedgeStats stats = ex.stats();
        assertThat((double) stats.hedgesSent() / stats.calls()).isLessThanOrEqualTo(0.055);
        assertThat(stats.inFlightCalls()).isZero();
        assertThat(stats.pendingAttempts()).isZero();
        assertThat(time.pendingTasks()).isZero();
    }
}

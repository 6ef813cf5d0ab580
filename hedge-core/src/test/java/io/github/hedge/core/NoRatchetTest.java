package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Scylla #3746: tracking hedged end-to-end latency makes the percentile climb until hedging
 * stops. The executor records each attempt's own latency, and the default scope takes the median
 * of the targets' percentiles, so one target becoming 10x slower does not drag the delay up.
 */
class NoRatchetTest {
    private static final long MS = 1_000_000L;

    @Test
    void should_keep_delay_near_healthy_p95_when_one_of_three_targets_becomes_10x_slower() {
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
                maxDelayDuringSlowdown = Math.max(maxDelayDuringSlowdown, ex.currentDelayNanos());
            }
        }
        time.runUntilIdle();
        assertThat(healthyDelay).isPositive();
        assertThat((double) maxDelayDuringSlowdown / healthyDelay).isLessThanOrEqualTo(1.2);
        HedgeStats stats = ex.stats();
        assertThat((double) stats.hedgesSent() / stats.calls()).isLessThanOrEqualTo(0.055);
        assertThat(stats.inFlightCalls()).isZero();
        assertThat(stats.pendingAttempts()).isZero();
        assertThat(time.pendingTasks()).isZero();
    }
}

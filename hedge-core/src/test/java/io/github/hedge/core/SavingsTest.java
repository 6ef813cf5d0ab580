package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link HedgedExecutor#savings()}: from the executor's own calls, the latency they had beside an
 * estimate of the latency they would have had without hedging, where cancelled primaries are
 * censored samples.
 */
class SavingsTest {
    private static final long MS = 1_000_000L;

    @Test
    void should_estimate_the_unhedged_percentiles_when_hedges_cancel_the_slow_primaries() {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = HedgedExecutor.of(
                "saved",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .maxExtraLoad(0.05)
                        .savingsWindow(Duration.ofMinutes(10))
                        .build());
        SplittableRandom rnd = new SplittableRandom(3);
        int calls = 300_000;
        double[] primaries = new double[calls];
        for (int i = 0; i < calls; i++) {
            double primaryMs = Math.exp(rnd.nextGaussian()); // lognormal(0, 1) ms
            double hedgeMs = Math.exp(rnd.nextGaussian());
            primaries[i] = primaryMs;
            ex.executeAsync(ctx -> {
                CompletableFuture<String> f = new CompletableFuture<>();
                double ms = ctx.isHedge() ? hedgeMs : primaryMs;
                var task = time.schedule(() -> f.complete("ok"), (long) (ms * MS));
                ctx.onCancel(task::cancel);
                return f;
            });
            time.advanceNanos(MS); // 1,000 calls/s: 300 s in all
        }
        time.advance(Duration.ofSeconds(10));

        HedgeSavings s = ex.savings();
        java.util.Arrays.sort(primaries);
        double trueP99 = primaries[(int) (0.99 * calls) - 1] * MS;
        double trueP999 = primaries[(int) (0.999 * calls) - 1] * MS;
        assertThat(s.censoredPrimaries()).isPositive();
        assertThat((double) s.unhedgedEstimate().p99Nanos()).isCloseTo(trueP99, withinPercentage(10));
        // p99.9 lies where nearly every primary was cancelled (it would need a hedge slower than
        // p99.9 minus the delay to be seen): the estimate is no better than a lower bound there
        assertThat(s.unhedgedEstimate().p999Nanos()).isGreaterThan(s.hedged().p999Nanos());
        assertThat((double) s.unhedgedEstimate().p999Nanos()).isGreaterThan(0.9 * trueP999);
        assertThat(s.hedged().p99Nanos()).isLessThan((long) (0.8 * trueP99));
        assertThat(s.unhedgedEstimate().count()).isEqualTo(calls);
        assertThat(s.extraLoad()).isBetween(0.03, 0.05 * 1.05);
        assertThat(s.toString()).contains("p99 ").contains("extra");
    }

    @Test
    void should_show_no_samples_when_no_call_has_run() {
        HedgeSavings s = HedgedExecutor.ofDefaults("idle").savings();

        assertThat(s.hedged()).isEqualTo(LatencySummary.EMPTY);
        assertThat(s.unhedgedEstimate()).isEqualTo(LatencySummary.EMPTY);
        assertThat(s.extraLoad()).isZero();
        assertThat(s.toString()).contains("n/a");
    }
}

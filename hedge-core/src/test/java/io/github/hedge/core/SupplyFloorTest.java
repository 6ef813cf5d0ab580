package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * The floors of a percentile delay with budget feedback. The supply floor: the delay is at least the
 * pooled percentile at which demand for hedges meets what the budget supplies, a lower bound of it
 * when samples are few. Both floors apply only while the budget's bucket is less than half full.
 * Virtual time.
 */
class SupplyFloorTest {
    private static final long MS = 1_000_000;

    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final LatencyTracker tracker = LatencyTracker.builder().ticker(time).build();
    private final PercentileDelay p96 =
            DelayPolicy.percentile(0.96).budgetFeedback(true).build();

    /** {@code n} samples on each of three targets: 1 ms, 2 ms... n ms. */
    private void uniform(int n) {
        for (int i = 1; i <= n; i++) {
            for (String t : List.of("a", "b", "c")) {
                tracker.record(t, i * MS);
            }
        }
        time.advance(Duration.ofSeconds(1)); // past the tracker's next refresh
    }

    @Test
    void should_raise_the_warm_up_delay_to_the_percentile_the_budget_supplies_when_its_tokens_run_short() {
        // 60 samples, a quarter of them 10-50 ms, the rest 1 ms: warm-up (p96 needs 125 per
        // target), at 4 x the median, 4 ms, which asks for a hedge for a quarter of the calls
        for (int i = 0; i < 20; i++) {
            for (String t : List.of("a", "b", "c")) {
                tracker.record(t, (i < 15 ? 1 : 10 * (i - 14)) * MS);
            }
        }
        time.advance(Duration.ofSeconds(1));
        long warmUp = p96.delayNanos(context(1.0));
        assertThat(p96.source(context(1.0))).isEqualTo(DelaySource.WARM_UP);

        // a supply of 10% of the calls: a lower bound of the pooled p90 with 60 samples,
        // 0.1 + sqrt(0.1 * 0.9 / 60) = 0.139 rounded up the grid to 0.05 * 2^(4/4) = 0.1414: p85.9
        long floor = p96.delayNanos(context(0.10));
        assertThat(floor).isEqualTo(tracker.percentileNanos(1 - 0.05 * Math.pow(2, 4 / 4.0)));
        assertThat(floor).isGreaterThan(warmUp);
        assertThat(p96.source(context(0.10))).isEqualTo(DelaySource.BUDGET);
    }

    @Test
    void should_leave_the_warm_up_delay_alone_when_the_budget_supplies_what_it_asks_or_is_unknown() {
        uniform(20);
        long warmUp = p96.delayNanos(DelayContext.of(2, List.of(), tracker));

        assertThat(p96.delayNanos(context(0.30))).isEqualTo(warmUp);
        assertThat(p96.delayNanos(context(Double.POSITIVE_INFINITY))).isEqualTo(warmUp);
        assertThat(p96.delayNanos(context(Double.NaN))).isEqualTo(warmUp);
        assertThat(DelayPolicy.percentile(0.96).build().delayNanos(context(0.01)))
                .as("without budget feedback")
                .isEqualTo(warmUp);
    }

    @Test
    void should_stay_below_a_slow_mode_when_few_samples_cannot_show_it_holds_more_calls_than_the_supply() {
        // 200 samples, 10 of them (5%) a 1 s stall on target c; the budget supplies 4%. The 4.2% the
        // grid rounds 4% to would sit in the stalls; 200 samples cannot tell 5% from 4%
        stalls(200, 10);
        assertThat(p96.delayNanos(context(0.04))).isLessThan(1000 * MS);
    }

    @Test
    void should_rise_into_a_slow_mode_when_the_samples_show_it_holds_more_calls_than_the_budget_supplies() {
        // 360 samples, 16 (4.4%) a 1 s stall on target c; the budget supplies 1%, which 360 samples
        // bound at 2.5% at most: less than the stalls, so the delay asks for what the budget pays
        // for, the slowest calls first (the targets' own warm-up bound would hedge every stall)
        stalls(360, 16);
        assertThat(p96.delayNanos(context(1.0))).isLessThan(1000 * MS);
        assertThat(p96.delayNanos(context(0.01))).isCloseTo(1000 * MS, withinPercentage(1));
    }

    private void stalls(int n, int stalled) {
        SplittableRandom r = new SplittableRandom(7);
        int stalls = 0;
        for (int i = 0; i < n; i++) {
            String target = List.of("a", "b", "c").get(i % 3);
            boolean stall = target.equals("c") && stalls < stalled;
            stalls += stall ? 1 : 0;
            tracker.record(target, stall ? 1000 * MS : (1 + r.nextInt(5)) * MS);
        }
        time.advance(Duration.ofSeconds(1));
    }

    @Test
    void should_deny_few_hedges_from_a_cold_start_when_the_tail_is_heavier_than_the_warm_up_bound_assumes() {
        // three targets answering after lognormal(0, 1.5) ms, 1,000 calls at 10 calls/s per seed:
        // the warm-up bound (4 x the median, the supported p80 and p90) asks for 10% of the calls,
        // twice what a new 5% budget supplies. Without the floor, about 5.6% of calls are denied.
        long calls = 0;
        long denied = 0;
        for (long seed = 1; seed <= 4; seed++) {
            VirtualTimeScheduler t = new VirtualTimeScheduler();
            HedgedExecutor ex = executor("cold", t, 0.05);
            SplittableRandom r = new SplittableRandom(seed);
            threeTargets(ex, t, 0, 1000, 100 * MS, i -> new long[] {lognormal(r), lognormal(r), lognormal(r)});
            t.runUntilIdle();
            calls += ex.stats().calls();
            denied += ex.stats().budgetDenied();
            assertThat(ex.stats().inFlightCalls()).isZero();
            assertThat(t.pendingTasks()).isZero();
        }
        assertThat((double) denied / calls).isLessThan(0.02);
    }

    /** An executor in virtual time, every call idempotent, {@code maxExtraLoad(b)}. */
    private static HedgedExecutor executor(String name, VirtualTimeScheduler t, double b) {
        return HedgedExecutor.of(
                name,
                HedgeConfig.builder()
                        .ticker(t)
                        .scheduler(t)
                        .idempotentByDefault(true)
                        .maxExtraLoad(b)
                        .build());
    }

    /**
     * Starts calls {@code from} to {@code to - 1}, one every {@code gapNanos}, on three targets a, b
     * and c: call i's primary runs on target {@code i % 3}, its k-th attempt on the next ones, and
     * attempt k answers after {@code latencies.apply(i)[k - 1]} ns.
     */
    private static void threeTargets(
            HedgedExecutor ex, VirtualTimeScheduler t, int from, int to, long gapNanos, IntFunction<long[]> latencies) {
        for (int i = from; i < to; i++) {
            int primary = i % 3;
            long[] latency = latencies.apply(i);
            ex.executeAsync(ctx -> {
                int k = ctx.attemptNumber();
                ctx.reportTarget(List.of("a", "b", "c").get((primary + k - 1) % 3));
                CompletableFuture<String> f = new CompletableFuture<>();
                var task = t.schedule(() -> f.complete("ok"), latency[Math.min(k, 3) - 1]);
                ctx.onCancel(task::cancel);
                return f;
            });
            t.advanceNanos(gapNanos);
        }
    }

    private static long lognormal(SplittableRandom r) {
        double u = 1.0 - r.nextDouble();
        double z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.nextDouble());
        return Math.max(1, (long) (Math.exp(1.5 * z) * MS));
    }

    @Test
    void should_send_no_warm_up_hedge_when_the_budget_pays_for_fewer_than_the_samples_support() {
        uniform(20); // 60 samples: the warm-up bound asks for at least 5 of them
        assertThat(p96.delayNanos(context(0.01, 0.25, 5.0))).isNotEqualTo(DelayPolicy.NO_HEDGE);

        assertThat(p96.delayNanos(context(0.01, 0.25, 4.9))).isEqualTo(DelayPolicy.NO_HEDGE);
        assertThat(p96.source(context(0.01, 0.25, 4.9))).isEqualTo(DelaySource.BUDGET);
        assertThat(p96.delayNanos(context(0.01, 0.25, Double.NaN)))
                .as("tokens unknown")
                .isNotEqualTo(DelayPolicy.NO_HEDGE);
    }

    @Test
    void should_deny_no_hedge_from_a_cold_start_when_the_budget_is_too_small_to_pay_for_the_warm_up() {
        // a 0.1% budget starts with 0.4 tokens, and its deposits add 5 only after thousands of
        // calls: the warm-up bound would ask for hedges of the slowest of its few samples, which
        // the budget refuses. Three targets answering after lognormal(0, 1.5) ms, 3,000 calls
        VirtualTimeScheduler t = new VirtualTimeScheduler();
        HedgedExecutor ex = executor("tiny", t, 0.001);
        SplittableRandom r = new SplittableRandom(3);
        threeTargets(ex, t, 0, 3000, 10 * MS, i -> new long[] {lognormal(r), lognormal(r), lognormal(r)});
        t.runUntilIdle();
        assertThat(ex.stats().calls()).isEqualTo(3000);
        assertThat(ex.stats().budgetDenied()).isZero();
        assertThat(ex.stats().inFlightCalls()).isZero();
        assertThat(t.pendingTasks()).isZero();
    }

    @Test
    void should_leave_the_delay_to_the_targets_when_the_budget_is_at_least_half_full() {
        // the setting in which the floor lifts the delay into a stalling target's mode (above)
        stalls(360, 16);
        long targets = p96.delayNanos(context(1.0));
        assertThat(p96.delayNanos(context(0.01, 0.49))).isCloseTo(1000 * MS, withinPercentage(1));

        assertThat(p96.delayNanos(context(0.01, 0.5))).isEqualTo(targets);
        assertThat(p96.source(context(0.01, 0.5))).isNotEqualTo(DelaySource.BUDGET);
        assertThat(p96.delayNanos(context(0.01, 1.0))).isEqualTo(targets);
    }

    @Test
    void should_hedge_again_within_seconds_when_a_slow_target_recovers() {
        // three targets answering in 1-5 ms at 1,000 calls/s; target a is 10 x slower for 30 s.
        // During the slowdown the floors lift the delay into a's calls. The window still holds them
        // for 30 s after a recovers, but the budget's bucket refills, and the delay returns to
        // the targets' own p95: from 3 s after the recovery, hedges use most of the 5% budget.
        VirtualTimeScheduler t = new VirtualTimeScheduler();
        HedgedExecutor ex = executor("recovery", t, 0.05);
        SplittableRandom r = new SplittableRandom(11);
        IntFunction<long[]> latencies = i -> {
            boolean slow = i >= 30_000 && i < 60_000;
            long[] latency = new long[3];
            for (int k = 0; k < 3; k++) {
                int target = (i % 3 + k) % 3;
                latency[k] = (long) ((1 + 4 * r.nextDouble()) * MS * (slow && target == 0 ? 10 : 1));
            }
            return latency;
        };
        threeTargets(ex, t, 0, 63_000, MS, latencies);
        long hedgesBefore = ex.stats().hedgesSent();
        long callsBefore = ex.stats().calls();
        threeTargets(ex, t, 63_000, 70_000, MS, latencies);
        t.runUntilIdle();
        double extraLoad =
                (double) (ex.stats().hedgesSent() - hedgesBefore) / (ex.stats().calls() - callsBefore);
        assertThat(extraLoad).isGreaterThan(0.03).isLessThanOrEqualTo(0.055);
        assertThat(ex.stats().inFlightCalls()).isZero();
        assertThat(t.pendingTasks()).isZero();
    }

    private DelayContext context(double supply) {
        return context(supply, 0.25);
    }

    private DelayContext context(double supply, double fill) {
        return context(supply, fill, 100);
    }

    private DelayContext context(double supply, double fill, double tokens) {
        return FixedBudgetContext.withFill(tracker, fill).ratio(0.05).supply(supply, tokens);
    }
}

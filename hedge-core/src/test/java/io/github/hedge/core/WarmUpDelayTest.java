package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The warm-up bound a percentile delay hedges at before its estimate is trusted. Virtual time. */
class WarmUpDelayTest {
    private static final long MS = 1_000_000;

    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final LatencyTracker tracker = LatencyTracker.builder().ticker(time).build();
    private final PercentileDelay p96 = DelayPolicy.percentile(0.96).build();

    private long delay(DelayPolicy policy) {
        time.advance(Duration.ofSeconds(1)); // past the tracker's next refresh
        return policy.delayNanos(DelayContext.of(2, List.of(), tracker));
    }

    @Test
    void should_not_hedge_when_no_attempt_has_answered_yet() {
        assertThat(delay(p96)).isEqualTo(DelayPolicy.NO_HEDGE);
    }

    @Test
    void should_hedge_at_four_times_the_median_when_one_answer_is_known() {
        tracker.record("a", 2 * MS);

        assertThat(delay(p96)).isCloseTo(8 * MS, withinPercentage(5));
    }

    @Test
    void should_take_the_lower_median_of_the_targets_when_one_target_of_three_stalls() {
        for (int i = 0; i < 10; i++) {
            tracker.record("a", 2 * MS);
            tracker.record("b", 3 * MS);
            tracker.record("stalling", 200 * MS);
        }

        assertThat(delay(p96)).isCloseTo(12 * MS, withinPercentage(5));
    }

    @Test
    void should_not_let_a_slow_target_hold_the_delay_up_when_the_others_have_answered_only_once() {
        // sequential calls on a new session: the slow node answered twice (250 ms), the two others
        // once each (their first answers, not samples, but upper bounds of their latency)
        tracker.recordAnswer("slow", 0, 250 * MS);
        tracker.recordAnswer("b", 250 * MS, 253 * MS);
        tracker.recordAnswer("c", 253 * MS, 257 * MS);
        tracker.recordAnswer("slow", 257 * MS, 507 * MS);

        assertThat(delay(p96)).isCloseTo(16 * MS, withinPercentage(5));
    }

    @Test
    void should_not_raise_the_delay_when_first_answers_are_slower_than_the_samples() {
        // a new channel: a's samples are 2 ms, b's and c's first answers waited for their connection
        tracker.recordAnswer("a", 0, 100 * MS);
        for (int i = 0; i < 5; i++) {
            tracker.recordAnswer("a", (200 + i) * MS, (202 + i) * MS);
        }
        tracker.recordAnswer("b", 0, 120 * MS);
        tracker.recordAnswer("c", 0, 130 * MS);

        assertThat(delay(p96)).isCloseTo(8 * MS, withinPercentage(5));
    }

    @Test
    void should_follow_each_new_first_answer_when_no_sample_has_come_in_since_the_last_decision() {
        tracker.recordAnswer("slow", 0, 40 * MS);
        assertThat(delay(p96)).isCloseTo(160 * MS, withinPercentage(5));
        DelayContext now = DelayContext.of(2, List.of(), tracker);
        assertThat(p96.delayNanos(now)).as("asked again, nothing new").isCloseTo(160 * MS, withinPercentage(5));

        // first answers are not samples: the tracker's snapshot stays the same, the bound does not
        tracker.recordAnswer("b", 40 * MS, 42 * MS);
        tracker.recordAnswer("c", 40 * MS, 43 * MS);

        assertThat(p96.delayNanos(now)).isCloseTo(12 * MS, withinPercentage(5));
        assertThat(p96.source(now)).isEqualTo(DelaySource.WARM_UP);
    }

    @Test
    void should_use_the_pooled_median_when_the_adapter_reports_no_targets() {
        for (int i = 0; i < 5; i++) {
            tracker.record(i == 0 ? 100 * MS : 5 * MS);
        }

        assertThat(delay(p96)).isCloseTo(20 * MS, withinPercentage(5));
    }

    @Test
    void should_not_follow_a_slow_third_of_pooled_samples_when_the_adapter_reports_no_targets() {
        // no targets: a slow replica's answers are a third of the pooled samples, so its latency is
        // the pooled p80 and p90; only the median stands
        for (int i = 0; i < 90; i++) {
            tracker.record(i % 3 == 0 ? 200 * MS : 5 * MS);
        }

        assertThat(delay(p96)).isCloseTo(20 * MS, withinPercentage(5));
    }

    @Test
    void should_rise_to_the_supported_percentiles_when_the_tail_is_heavier_than_the_stall_test() {
        // lognormal(0, 1.5) per target: p90 is 6.8x the median, above the stall test's 4x
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < 60; i++) {
            for (String t : new String[] {"a", "b", "c"}) {
                tracker.record(t, (long) (MS * Math.exp(1.5 * gaussian(rnd))));
            }
        }
        time.advance(Duration.ofSeconds(1));
        long p90 = tracker.medianTargetPercentileNanos(0.9, 50);
        long median = tracker.medianTargetPercentileNanos(0.5, 1);
        assertThat(p90).isGreaterThan(4 * median);

        assertThat(delay(p96)).isEqualTo(p90);
    }

    @Test
    void should_hand_over_to_the_trusted_percentile_when_a_target_holds_enough_samples() {
        SplittableRandom rnd = new SplittableRandom(3);
        for (int i = 0; i < 200; i++) {
            tracker.record("a", (long) (2 * MS * Math.exp(0.5 * gaussian(rnd))));
        }
        time.advance(Duration.ofSeconds(1));

        // 200 samples support the p96 lowered by one standard error, rounded to the grid: p95.24
        assertThat(delay(p96)).isEqualTo(tracker.consensusTargetPercentileNanos(1 - 0.04 * Math.pow(2, 0.25), 125));
    }

    @Test
    void should_not_wait_for_the_slow_mode_when_a_few_more_slow_samples_than_its_share_came_in() {
        // 3% of calls slow (20-80 ms) and a p96: 7 slow ones among the first 125 samples (5.6%) put the
        // p96 of the samples in the slow mode
        for (int i = 0; i < 125; i++) {
            tracker.record("a", i < 7 ? (20 + 10 * i) * MS : (1 + i % 3) * MS);
        }
        time.advance(Duration.ofSeconds(1));
        assertThat(tracker.consensusTargetPercentileNanos(0.96, 125)).isGreaterThanOrEqualTo(20 * MS);

        assertThat(delay(p96)).isLessThan(4 * MS);
    }

    @Test
    void should_aim_at_the_percentile_itself_when_the_window_holds_enough_samples() {
        SplittableRandom rnd = new SplittableRandom(5);
        for (int i = 0; i < 1_000; i++) {
            tracker.record(i % 2 == 0 ? "a" : "b", (long) (2 * MS * Math.exp(0.5 * gaussian(rnd))));
        }
        time.advance(Duration.ofSeconds(1));

        assertThat(delay(p96)).isEqualTo(tracker.consensusTargetPercentileNanos(0.96, 125));
    }

    @Test
    void should_not_use_the_pooled_percentile_when_targets_are_reported_but_none_is_trusted() {
        // 3 x 60 samples: 180 pooled (enough for a pooled p96), none trusted per target; one target
        // stalls on a third of its calls, which puts the pooled p96 into its stalls
        for (int i = 0; i < 60; i++) {
            tracker.record("a", 2 * MS);
            tracker.record("b", 2 * MS);
            tracker.record("stalling", i % 3 == 0 ? 150 * MS : 2 * MS);
        }
        time.advance(Duration.ofSeconds(1));
        assertThat(tracker.percentileNanos(0.96)).isGreaterThan(100 * MS);

        assertThat(delay(p96)).isCloseTo(8 * MS, withinPercentage(5));
    }

    @Test
    void should_clamp_the_warm_up_bound_to_the_policy_range_when_it_is_outside() {
        tracker.record("a", 2 * MS);
        PercentileDelay clamped =
                DelayPolicy.percentile(0.96).max(Duration.ofMillis(5)).build();
        PercentileDelay floored =
                DelayPolicy.percentile(0.96).min(Duration.ofMillis(20)).build();

        assertThat(delay(clamped)).isEqualTo(5 * MS);
        assertThat(delay(floored)).isEqualTo(20 * MS);
    }

    @Test
    void should_not_hedge_before_the_estimate_when_the_fallback_is_never() {
        tracker.record("a", 2 * MS);

        assertThat(delay(DelayPolicy.percentile(0.96)
                        .fallback(DelayPolicy.never())
                        .build()))
                .isEqualTo(DelayPolicy.NO_HEDGE);
    }

    @Test
    void should_report_where_the_delay_comes_from_when_the_estimate_becomes_trusted() {
        DelayContext ctx = DelayContext.of(2, List.of(), tracker);
        assertThat(p96.source(ctx)).isEqualTo(DelaySource.WARM_UP);
        assertThat(DelayPolicy.percentile(0.96)
                        .fallback(DelayPolicy.never())
                        .build()
                        .source(ctx))
                .isEqualTo(DelaySource.FALLBACK);
        assertThat(DelayPolicy.fixed(Duration.ofMillis(5)).source(ctx)).isEqualTo(DelaySource.POLICY);
        for (int i = 0; i < 125; i++) {
            tracker.record("a", 2 * MS);
        }
        time.advance(Duration.ofSeconds(1));

        assertThat(p96.source(ctx)).isEqualTo(DelaySource.ESTIMATE);
    }

    @Test
    void should_ask_for_no_more_than_the_budget_supplies_of_all_traffic_when_one_target_stalls() {
        oneOfThreeStalls();
        PercentileDelay p96 = DelayPolicy.percentile(0.96).budgetFeedback(true).build();
        long consensus = tracker.consensusTargetPercentileNanos(0.96, 125);
        // the targets' p96 asks for 4% of the healthy calls and the 3.3% that stall: 7.3% of all
        // calls, more than a 5% budget supplies; the pooled p95 asks for 5% of all calls, stalls first
        long pooledP95 = tracker.percentileNanos(0.95);
        // a low 5% budget: the pooled percentile asking for 80% of it, 4% of the calls
        long pooledLow = tracker.percentileNanos(1 - 0.8 * 0.05);

        assertThat(pooledP95).isGreaterThan(consensus).isLessThan(1000 * MS);
        assertThat(p96.delayNanos(withFill(0.4)))
                .as("a budget less than half full: the pooled p95, since the targets' own asks for more")
                .isEqualTo(pooledP95);
        assertThat(p96.delayNanos(withFill(0.5)))
                .as("a budget at least half full pays for more for a while: the targets' own p96")
                .isEqualTo(consensus);
        assertThat(pooledLow)
                .isGreaterThan(tracker.consensusTargetPercentileNanos(0.968, 157))
                .isLessThan(1000 * MS);
        assertThat(p96.delayNanos(withFill(0.1)))
                .as("a low budget: less than the budget supplies, of all the traffic")
                .isEqualTo(pooledLow);
    }

    @Test
    void should_hedge_the_stalls_when_they_are_a_little_over_the_percentile_s_share_of_all_calls() {
        // three targets, 2-5 ms; c also stalls 13% of its calls for 40-250 ms: 4.3% of all calls,
        // and 0.5% of each target's calls are 15 ms: 4.8% of all calls above the healthy body, under
        // what a 5% budget pays for
        for (int i = 0; i < 1000; i++) {
            for (String t : List.of("a", "b", "c")) {
                long v = (2 + i % 4) * MS;
                if (i % 200 == 7) {
                    v = 15 * MS;
                } else if (t.equals("c") && i % 100 < 13) {
                    v = (40 + (i * 37) % 210) * MS;
                }
                tracker.record(t, v);
            }
        }
        time.advance(Duration.ofSeconds(1));
        PercentileDelay p96 = DelayPolicy.percentile(0.96).budgetFeedback(true).build();
        assertThat(tracker.percentileNanos(0.96))
                .as("the pooled p96 lies in the stalls")
                .isGreaterThanOrEqualTo(40 * MS);

        assertThat(p96.delayNanos(withFill(0.3)))
                .as("a budget less than half full: below the stalls, which it pays for")
                .isLessThan(40 * MS);
    }

    @Test
    void should_not_lift_the_delay_into_the_stalls_to_refill_a_low_budget_when_they_lie_between_its_levels() {
        // three targets, 2-5 ms; c also stalls 13.5% of its calls for 40-250 ms: 4.5% of all calls,
        // fewer than a 5% budget pays for, more than the 4% a nearly empty bucket aims at to refill
        for (int i = 0; i < 1000; i++) {
            for (String t : List.of("a", "b", "c")) {
                long v = (2 + i % 4) * MS;
                if (t.equals("c") && i % 200 < 27) {
                    v = (40 + (i * 37) % 210) * MS;
                }
                tracker.record(t, v);
            }
        }
        time.advance(Duration.ofSeconds(1));
        PercentileDelay p96 = DelayPolicy.percentile(0.96).budgetFeedback(true).build();
        assertThat(tracker.percentileNanos(1 - 0.8 * 0.05))
                .as("the pooled percentile a refilling bucket aims at lies in the stalls")
                .isGreaterThanOrEqualTo(40 * MS);
        long pooledP95 = tracker.percentileNanos(0.95);
        assertThat(pooledP95).as("the pooled p95 below them").isLessThan(10 * MS);

        assertThat(p96.delayNanos(withFill(0.1)))
                .as("a bucket less than an eighth full: at most the pooled p95, not the stalls")
                .isLessThanOrEqualTo(pooledP95);
        assertThat(p96.source(withFill(0.1))).isEqualTo(DelaySource.ESTIMATE);
    }

    @Test
    void
            should_aim_at_the_highest_percentile_the_samples_support_when_the_budget_runs_low_before_they_support_its_own() {
        // 150 samples per target, 1-150 ms: enough for p96 (125), not for the p98.4 a nearly empty
        // 5% budget aims at (313)
        for (int i = 1; i <= 150; i++) {
            for (String t : List.of("a", "b", "c")) {
                tracker.record(t, i * MS);
            }
        }
        time.advance(Duration.ofSeconds(1));
        PercentileDelay p96 = DelayPolicy.percentile(0.96).budgetFeedback(true).build();
        long estimate = p96.delayNanos(withFill(0.4));
        assertThat(p96.source(withFill(0.4))).isEqualTo(DelaySource.ESTIMATE);

        assertThat(p96.source(withFill(0.01)))
                .as("not the warm-up bound, which asks for more hedges")
                .isEqualTo(DelaySource.ESTIMATE);
        assertThat(p96.delayNanos(withFill(0.01))).isEqualTo(estimate);
    }

    @Test
    void should_not_let_a_target_placement_keeps_calls_off_lift_the_delay_when_the_budget_is_low() {
        // a and b 2-5 ms; c stalls a fifth of its calls for 200 ms over the first second, then the
        // placement keeps calls off it (a balancer holding a stalling replica off)
        for (int s = 0; s < 6; s++) {
            for (int i = 0; i < 150; i++) {
                tracker.record("a", (2 + i % 4) * MS);
                tracker.record("b", (2 + i % 4) * MS);
                if (s == 0) {
                    tracker.record("c", i % 5 == 0 ? 200 * MS : (2 + i % 4) * MS);
                }
            }
            time.advance(Duration.ofSeconds(1));
            tracker.percentileNanos(0.5); // a reader refreshes, as each call does
        }
        PercentileDelay p96 = DelayPolicy.percentile(0.96).budgetFeedback(true).build();

        // c's 30 stalls are 1.6% of the window's samples: within the pooled p95's 5% they would
        // not lift it, but they lift the pooled p99 a 1% budget reads
        assertThat(p96.delayNanos(withFill(0.3, 0.01)))
                .as("a 1% budget less than half full: the pooled p99 of the calls being made")
                .isLessThanOrEqualTo(6 * MS);
        assertThat(tracker.percentileNanos(0.99, "c")).isGreaterThanOrEqualTo(200 * MS);
    }

    @Test
    void should_read_each_budgets_ratio_when_two_budgets_share_the_policy_and_the_tracker() {
        oneOfThreeStalls();
        PercentileDelay p96 = DelayPolicy.percentile(0.96).budgetFeedback(true).build();
        long pooledP95 = tracker.percentileNanos(0.95);
        long pooledP99 = tracker.percentileNanos(0.99);
        assertThat(pooledP99).isGreaterThan(pooledP95);

        // between two refreshes: a 5% budget's calls, then a 1% budget's, then the 5% budget's again
        assertThat(p96.delayNanos(withFill(0.4, 0.05))).isEqualTo(pooledP95);
        assertThat(p96.delayNanos(withFill(0.4, 0.05))).isEqualTo(pooledP95);
        assertThat(p96.delayNanos(withFill(0.4, 0.01)))
                .as("a 1% budget: the pooled p99, which asks for what it supplies")
                .isEqualTo(pooledP99);
        assertThat(p96.delayNanos(withFill(0.4, 0.05))).isEqualTo(pooledP95);
    }

    private void oneOfThreeStalls() {
        TrackerFeeds.oneOfThreeStalls(tracker, time);
    }

    private DelayContext withFill(double fill) {
        return withFill(fill, 0.05);
    }

    private DelayContext withFill(double fill, double ratio) {
        return FixedBudgetContext.withFill(tracker, fill).ratio(ratio);
    }

    @Test
    void should_advance_tokens_in_proportion_to_the_ratio_when_a_budget_is_cold() {
        assertThat(HedgeBudget.coldStartTokens(0.05)).isEqualTo(20);
        assertThat(HedgeBudget.coldStartTokens(0.01)).isEqualTo(4);
        assertThat(HedgeBudget.coldStartTokens(0.5)).isEqualTo(20);
        assertThat(HedgeBudget.coldStartTokens(0)).isZero();
    }

    private static double gaussian(SplittableRandom r) {
        double u = 1.0 - r.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.nextDouble());
    }
}

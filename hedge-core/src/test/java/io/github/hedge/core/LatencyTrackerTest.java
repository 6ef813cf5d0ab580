package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.github.hedge.core.internal.LogLinearBuckets;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LatencyTrackerTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long US = TimeUnit.MICROSECONDS.toNanos(1);

    private final VirtualTimeScheduler time = new VirtualTimeScheduler();

    private LatencyTracker tracker() {
        return LatencyTracker.builder().ticker(time).build();
    }

    private LatencyTracker tracker(Duration window, Duration refresh) {
        return LatencyTracker.builder()
                .ticker(time)
                .window(window)
                .refreshInterval(refresh)
                .minWindowSamples(0) // a plain time window
                .build();
    }

    private void nextRefresh() {
        time.advance(Duration.ofSeconds(1));
    }

    // ------------------------------------------------------------------ percentiles

    @Test
    void should_report_percentiles_within_two_percent_when_distribution_is_uniform() {
        LatencyTracker t = tracker();
        for (int i = 1; i <= 10_000; i++) {
            t.record(i * US);
        }
        nextRefresh();

        assertThat(t.sampleCount()).isEqualTo(10_000);
        assertThat(t.percentileNanos(0.5)).isCloseTo(5_000 * US, withinPercentage(2));
        assertThat(t.percentileNanos(0.9)).isCloseTo(9_000 * US, withinPercentage(2));
        assertThat(t.percentileNanos(0.99)).isCloseTo(9_900 * US, withinPercentage(2));
        assertThat(t.percentileNanos(0.999)).isCloseTo(9_990 * US, withinPercentage(2));
        assertThat(t.percentileNanos(0.25)).isCloseTo(2_500 * US, withinPercentage(2));
        assertThat(t.summary().maxNanos()).isCloseTo(10_000 * US, withinPercentage(2));
    }

    @Test
    void should_report_percentiles_within_two_percent_when_distribution_is_exponential() {
        LatencyTracker t = tracker();
        Random random = new Random(42);
        long[] samples = new long[50_000];
        for (int i = 0; i < samples.length; i++) {
            samples[i] = (long) (-Math.log(1 - random.nextDouble()) * 2 * MS);
            t.record(samples[i]);
        }
        java.util.Arrays.sort(samples);
        nextRefresh();

        for (double p : new double[] {0.5, 0.9, 0.95, 0.99, 0.999}) {
            long exact = samples[(int) Math.ceil(p * samples.length) - 1];
            assertThat(t.percentileNanos(p)).as("p%s", p).isBetween(exact, (long) (exact * 1.02));
        }
    }

    @Test
    void should_never_report_below_true_value_and_at_most_1_6_percent_above_when_any_single_value_recorded() {
        Random random = new Random(7);
        for (int i = 0; i < 20_000; i++) {
            long v = (long) Math.exp(random.nextDouble() * Math.log(LogLinearBuckets.MAX_VALUE));
            int index = LogLinearBuckets.indexOf(v);
            assertThat(LogLinearBuckets.lowestValue(index)).isLessThanOrEqualTo(v);
            assertThat(LogLinearBuckets.highestValue(index)).isGreaterThanOrEqualTo(v);
            assertThat((double) LogLinearBuckets.highestValue(index)).isLessThanOrEqualTo(v * (1 + 1.0 / 64) + 1);
        }
        for (int index = 1; index < LogLinearBuckets.BUCKET_COUNT; index++) {
            assertThat(LogLinearBuckets.lowestValue(index))
                    .isEqualTo(LogLinearBuckets.highestValue(index - 1) + 1)
                    .isEqualTo(LogLinearBuckets.lowestValue(
                            LogLinearBuckets.indexOf(LogLinearBuckets.lowestValue(index))));
        }
    }

    @Test
    void should_report_exact_values_when_latencies_are_below_128_ns() {
        LatencyTracker t = tracker();
        for (int i = 0; i < 10; i++) {
            t.record(100);
        }
        nextRefresh();

        assertThat(t.summary()).isEqualTo(new LatencySummary(10, 100, 100, 100, 100, 100, 100));
    }

    @Test
    void should_clamp_to_zero_and_one_hour_when_values_are_out_of_range() {
        LatencyTracker t = tracker();
        t.record(-5);
        t.record(Long.MAX_VALUE);
        nextRefresh();

        assertThat(t.sampleCount()).isEqualTo(2);
        assertThat(t.percentileNanos(0.5)).isZero();
        assertThat(t.summary().maxNanos()).isEqualTo(TimeUnit.HOURS.toNanos(1));
        assertThat(t.percentileNanos(0.99)).isEqualTo(TimeUnit.HOURS.toNanos(1));
    }

    @Test
    void should_return_minus_one_and_empty_summary_when_window_is_empty() {
        LatencyTracker t = tracker();
        nextRefresh();

        assertThat(t.percentileNanos(0.99)).isEqualTo(-1);
        assertThat(t.percentileNanos(0.73)).isEqualTo(-1);
        assertThat(t.sampleCount()).isZero();
        assertThat(t.summary()).isEqualTo(LatencySummary.EMPTY);
        assertThat(t.medianTargetPercentileNanos(0.99, 0)).isEqualTo(-1);
        assertThat(t.targetSummaries()).isEmpty();
    }

    @Test
    void should_show_samples_only_after_next_refresh_when_the_window_holds_min_window_samples() {
        LatencyTracker t =
                LatencyTracker.builder().ticker(time).minWindowSamples(100).build();
        for (int i = 0; i < 100; i++) {
            t.record(MS);
        }
        nextRefresh();
        assertThat(t.sampleCount()).isEqualTo(100);

        t.record(MS);
        time.advance(Duration.ofMillis(999));
        assertThat(t.sampleCount()).isEqualTo(100);
        time.advance(Duration.ofMillis(1));
        assertThat(t.sampleCount()).isEqualTo(101);
    }

    @Test
    void should_show_samples_after_a_sixteenth_of_the_refresh_interval_when_warming_up() {
        LatencyTracker t = tracker(); // fewer than minWindowSamples (1000) samples: warming up
        for (int i = 0; i < 160; i++) { // past the first samples, which show at once (below)
            t.record(MS);
        }
        time.advance(Duration.ofMillis(63));
        assertThat(t.sampleCount()).isEqualTo(160);
        t.record(MS);
        time.advanceNanos(62_500_000 - 1);
        assertThat(t.sampleCount()).isEqualTo(160);
        time.advanceNanos(1);
        assertThat(t.sampleCount()).isEqualTo(161);
        assertThat(t.percentileNanos(0.5)).isCloseTo(MS, withinPercentage(2));

        t.record("a", 2 * MS); // targets too
        time.advance(Duration.ofMillis(63));
        assertThat(t.sampleCount("a")).isEqualTo(1);
        assertThat(t.sampleCount()).isEqualTo(162);
    }

    @Test
    void should_leave_out_answers_that_started_before_the_first_answer_of_their_target_when_recorded() {
        LatencyTracker t = tracker();
        // a new client's calls queue while it connects to "a" and answer together, 120 ms late
        t.recordAnswer("a", 0, 120 * MS); // the first answer: it measured the connection
        t.recordAnswer("a", 5 * MS, 121 * MS); // started before it
        t.recordAnswer("a", 130 * MS, 132 * MS); // after it: a sample
        t.recordAnswer("b", 131 * MS, 140 * MS); // b's first answer: no sample, whatever a did
        t.recordAnswer(null, 0, 150 * MS); // without a target: the first of all such answers
        t.recordAnswer(null, 151 * MS, 152 * MS);
        time.advance(Duration.ofSeconds(1));

        assertThat(t.sampleCount("a")).isEqualTo(1);
        assertThat(t.percentileNanos(0.5, "a")).isCloseTo(2 * MS, withinPercentage(2));
        assertThat(t.sampleCount("b")).isZero();
        assertThat(t.sampleCount()).isEqualTo(2);
    }

    @Test
    void should_show_each_of_the_first_samples_at_the_next_read_when_warming_up() {
        LatencyTracker t = tracker();
        assertThat(t.sampleCount()).isZero();
        t.record("a", MS);
        assertThat(t.sampleCount("a")).isEqualTo(1);
        assertThat(t.medianTargetPercentileNanos(0.5, 1)).isCloseTo(MS, withinPercentage(2));
        for (int i = 2; i <= 159; i++) {
            t.record("a", MS);
            assertThat(t.sampleCount()).isEqualTo(i);
        }
        t.record("a", MS); // the 160th shows at once; the 161st waits for the next sixteenth
        t.record("a", MS);
        assertThat(t.sampleCount()).isEqualTo(161);
        t.record("a", MS);
        assertThat(t.sampleCount()).isEqualTo(161);
        time.advance(Duration.ofMillis(63));
        assertThat(t.sampleCount()).isEqualTo(162);
    }

    @Test
    void should_not_warm_up_when_min_window_samples_is_zero() {
        LatencyTracker t = tracker(Duration.ofSeconds(30), Duration.ofSeconds(1)); // minWindowSamples 0
        t.record(MS);
        time.advance(Duration.ofMillis(999));
        assertThat(t.sampleCount()).isZero();
        time.advance(Duration.ofMillis(1));
        assertThat(t.sampleCount()).isEqualTo(1);
    }

    @Test
    void should_drop_a_sample_shown_early_when_it_would_have_left_after_its_interval_closed() {
        // a 3 s window in 1 s slices, never extended: a sample recorded in (0, 1 s] belongs to the
        // slice closed at 1 s and leaves the window when the slice closed at 4 s comes in
        LatencyTracker t = LatencyTracker.builder()
                .ticker(time)
                .window(Duration.ofSeconds(3))
                .maxWindowAge(Duration.ofSeconds(3))
                .build();
        time.advance(Duration.ofMillis(100));
        t.record(MS);
        time.advance(Duration.ofMillis(100));
        assertThat(t.sampleCount()).isEqualTo(1); // shown before its interval closed
        t.record(MS); // recorded after the early refresh: shown when the interval closes
        time.advance(Duration.ofMillis(800)); // 1 s: the interval closes
        assertThat(t.sampleCount()).isEqualTo(2);
        time.advance(Duration.ofMillis(2999)); // 3.999 s
        assertThat(t.sampleCount()).isEqualTo(2);
        time.advance(Duration.ofMillis(1)); // 4 s
        assertThat(t.sampleCount()).isZero();
    }

    @Test
    void should_compute_new_percentile_at_once_and_keep_it_updated_when_requested_first_time() {
        LatencyTracker t = tracker();
        for (int i = 1; i <= 100; i++) {
            t.record(i * MS);
        }
        nextRefresh();
        assertThat(t.percentileNanos(0.75)).isCloseTo(75 * MS, withinPercentage(2));

        for (int i = 0; i < 300; i++) {
            t.record(500 * MS);
        }
        nextRefresh();
        assertThat(t.percentileNanos(0.75)).isCloseTo(500 * MS, withinPercentage(2));
    }

    @Test
    void should_stay_correct_when_more_distinct_percentiles_than_cached_are_requested() {
        LatencyTracker t = tracker();
        for (int i = 1; i <= 1000; i++) {
            t.record(i * MS);
        }
        nextRefresh();

        for (int i = 1; i < 200; i++) {
            double p = i / 200.0;
            assertThat(t.percentileNanos(p))
                    .as("p=%s", p)
                    .isCloseTo((long) Math.ceil(p * 1000) * MS, withinPercentage(2));
            assertThat(t.percentileNanos(p))
                    .as("p=%s again", p)
                    .isCloseTo((long) Math.ceil(p * 1000) * MS, withinPercentage(2));
        }
    }

    // ------------------------------------------------------------------ window

    @Test
    void should_drop_old_samples_when_window_slides_past_them() {
        LatencyTracker t = tracker(Duration.ofSeconds(10), Duration.ofSeconds(1));
        for (int i = 0; i < 100; i++) {
            t.record(MS);
        }
        nextRefresh(); // t = 1 s: the first batch is visible
        assertThat(t.sampleCount()).isEqualTo(100);

        time.advance(Duration.ofSeconds(5)); // t = 6 s
        for (int i = 0; i < 50; i++) {
            t.record(2 * MS);
        }
        nextRefresh(); // t = 7 s
        assertThat(t.sampleCount()).isEqualTo(150);
        assertThat(t.percentileNanos(0.5)).isCloseTo(MS, withinPercentage(2));

        time.advance(Duration.ofSeconds(3)); // t = 10 s: the first batch has counted 9 s
        assertThat(t.sampleCount()).isEqualTo(150);

        nextRefresh(); // t = 11 s: it has counted for the whole 10 s window
        assertThat(t.sampleCount()).isEqualTo(50);
        assertThat(t.percentileNanos(0.5)).isCloseTo(2 * MS, withinPercentage(2));
        assertThat(t.summary().maxNanos()).isCloseTo(2 * MS, withinPercentage(2));

        time.advance(Duration.ofSeconds(6)); // t = 17 s
        assertThat(t.sampleCount()).isEqualTo(0);
        assertThat(t.percentileNanos(0.5)).isEqualTo(-1);
    }

    @Test
    void should_keep_samples_when_idle_gap_is_shorter_than_window() {
        LatencyTracker t = tracker(Duration.ofSeconds(30), Duration.ofSeconds(1));
        t.record(3 * MS);
        nextRefresh();

        time.advance(Duration.ofSeconds(28));

        assertThat(t.sampleCount()).isEqualTo(1);
        assertThat(t.percentileNanos(0.99)).isCloseTo(3 * MS, withinPercentage(2));
    }

    @Test
    void should_empty_window_when_idle_gap_is_longer_than_window() {
        LatencyTracker t = tracker(Duration.ofSeconds(30), Duration.ofSeconds(1));
        t.record("a", 3 * MS);
        nextRefresh();
        assertThat(t.sampleCount()).isEqualTo(1);

        time.advance(Duration.ofDays(3));

        assertThat(t.sampleCount()).isZero();
        assertThat(t.percentileNanos(0.99)).isEqualTo(-1);
        assertThat(t.summary()).isEqualTo(LatencySummary.EMPTY);
        assertThat(t.summary("a")).isEqualTo(LatencySummary.EMPTY);
        assertThat(t.medianTargetPercentileNanos(0.99, 1)).isEqualTo(-1);

        t.record(7 * MS);
        nextRefresh();
        assertThat(t.sampleCount()).isEqualTo(1);
        assertThat(t.percentileNanos(0.99)).isCloseTo(7 * MS, withinPercentage(2));
    }

    @Test
    void should_slide_in_refresh_steps_when_refresh_does_not_divide_window() {
        // ceil(1000 / 300) = 4 slices of 300 ms: a sample counts for 1.2 s from the refresh that sees it
        LatencyTracker t = tracker(Duration.ofMillis(1000), Duration.ofMillis(300));
        t.record(MS);
        time.advance(Duration.ofMillis(300));
        assertThat(t.sampleCount()).isEqualTo(1);
        time.advance(Duration.ofMillis(1199));
        assertThat(t.sampleCount()).isEqualTo(1);
        time.advance(Duration.ofMillis(1));
        assertThat(t.sampleCount()).isZero();
    }

    // ------------------------------------------------------------------ censored samples

    @Test
    void should_recover_the_percentile_when_slow_samples_are_cancelled_at_a_lower_bound() {
        // uniform 1..10,000 us; every sample above 5 ms is cancelled, half at 5 ms and half at 6 ms
        LatencyTracker t = tracker();
        LatencyTracker naive = tracker();
        Random r = new Random(5);
        for (int i = 1; i <= 10_000; i++) {
            long v = i * US;
            if (v > 5 * MS && r.nextInt(4) == 0) {
                long cut = v > 6 * MS && r.nextBoolean() ? 6 * MS : 5 * MS;
                t.recordCensored(cut);
                naive.record(cut);
            } else {
                t.record(v);
                naive.record(v);
            }
        }
        nextRefresh();

        // Kaplan-Meier gives the cancelled samples' weight to the observed ones above them
        assertThat(t.percentileNanos(0.9)).isCloseTo(9_000 * US, withinPercentage(3));
        assertThat(t.percentileNanos(0.99)).isCloseTo(9_900 * US, withinPercentage(3));
        assertThat(t.percentileNanos(0.5)).isCloseTo(5_000 * US, withinPercentage(3));
        // counting them as latencies at their elapsed time pulls the tail down
        assertThat(naive.percentileNanos(0.9)).isLessThan(8_800 * US);
        assertThat(t.sampleCount()).isEqualTo(10_000);
    }

    @Test
    void should_report_the_highest_sample_as_a_lower_bound_when_the_top_is_all_censored() {
        LatencyTracker t = tracker();
        for (int i = 1; i <= 90; i++) {
            t.record(i * MS);
        }
        for (int i = 0; i < 10; i++) {
            t.recordCensored(200 * MS);
        }
        nextRefresh();

        assertThat(t.percentileNanos(0.5)).isCloseTo(50 * MS, withinPercentage(2));
        assertThat(t.percentileNanos(0.99)).isCloseTo(200 * MS, withinPercentage(2));
        assertThat(t.summary().maxNanos()).isCloseTo(90 * MS, withinPercentage(2));
    }

    @Test
    void should_leave_out_a_target_that_stopped_completing_when_estimating() {
        LatencyTracker t = tracker();
        for (int s = 0; s < 40; s++) {
            for (int i = 1; i <= 100; i++) {
                t.record("a", i * 100 * US);
                t.record("b", i * 100 * US);
            }
            for (int i = 0; i < 50; i++) {
                t.recordCensored("dead", 30 * MS); // a hanging replica: every attempt cancelled
            }
            nextRefresh();
        }

        assertThat(t.percentileNanos(0.95, "dead")).isEqualTo(-1);
        assertThat(t.percentileNanos(0.95, "a")).isCloseTo(9_500 * US, withinPercentage(2));
        // without the exclusion, a fifth of the samples censored above every observed one would
        // put the pooled p95 at the top of the healthy range
        assertThat(t.percentileNanos(0.95)).isCloseTo(9_500 * US, withinPercentage(2));
        assertThat(t.medianTargetPercentileNanos(0.95, 100)).isCloseTo(9_500 * US, withinPercentage(2));
    }

    @Test
    void should_leave_a_target_the_traffic_left_out_of_the_pooled_percentile_when_estimating() {
        LatencyTracker t = tracker();
        for (int s = 0; s < 2; s++) { // a, b healthy; c stalls a fifth of its calls
            for (int i = 1; i <= 100; i++) {
                t.record("a", i * 100 * US);
                t.record("b", i * 100 * US);
                t.record("c", i % 5 == 0 ? 200 * MS : i * 100 * US);
            }
            nextRefresh();
            t.percentileNanos(0.5); // a reader refreshes, as each call does
        }
        assertThat(t.percentileNanos(0.95)).isGreaterThan(100 * MS);
        for (int s = 0; s < 10; s++) { // placement keeps calls off c
            for (int i = 1; i <= 100; i++) {
                t.record("a", i * 100 * US);
                t.record("b", i * 100 * US);
            }
            nextRefresh();
            t.percentileNanos(0.5); // a reader refreshes, as each call does
        }

        // c's 200 samples are still in the window, 40 of them stalls: 1.5% of all samples, above
        // the healthy p99 if they counted
        assertThat(t.sampleCount()).isEqualTo(2_600);
        assertThat(t.percentileNanos(0.99)).isCloseTo(9_900 * US, withinPercentage(2));
        assertThat(t.percentileNanos(0.95, "c")).isGreaterThan(100 * MS);
        assertThat(t.summary("c").count()).isEqualTo(200);
    }

    @Test
    void should_count_a_target_again_when_the_traffic_comes_back_to_it() {
        LatencyTracker t = tracker();
        for (int s = 0; s < 12; s++) {
            for (int i = 1; i <= 100; i++) {
                t.record("a", i * 100 * US);
                t.record("b", i * 100 * US);
                if (s < 2) {
                    t.record("c", i % 5 == 0 ? 200 * MS : i * 100 * US);
                }
            }
            nextRefresh();
            t.percentileNanos(0.5); // a reader refreshes, as each call does
        }
        assertThat(t.percentileNanos(0.99)).isLessThan(10 * MS);

        t.record("c", 100 * US);
        nextRefresh();

        assertThat(t.percentileNanos(0.99)).isGreaterThan(100 * MS);
    }

    @Test
    void should_keep_a_target_with_a_small_share_in_the_pooled_percentile_when_it_still_gets_its_share() {
        LatencyTracker t = tracker();
        for (int s = 0; s < 25; s++) {
            for (int i = 1; i <= 100; i++) {
                t.record("fast-" + (i % 3), i * 10 * US);
            }
            if (s % 5 == 0) {
                t.record("rare", 50 * MS); // one call in 500, every fifth second
            }
            nextRefresh();
            t.percentileNanos(0.5);
        }

        // four seconds and 400 calls after its last sample: a gap its share makes likely
        assertThat(t.percentileNanos(0.999)).isGreaterThanOrEqualTo(50 * MS);
    }

    @Test
    void should_keep_enough_samples_when_the_rate_is_low() {
        LatencyTracker t = LatencyTracker.builder()
                .ticker(time)
                .minWindowSamples(200)
                .maxWindowAge(Duration.ofMinutes(10))
                .build();
        for (int s = 0; s < 900; s++) { // one sample per second for 15 minutes
            t.record("a", MS);
            nextRefresh();
            t.sampleCount(); // a reader refreshes: each sample gets its own interval
        }
        // a 30 s window would hold 30; it keeps the newest 200 (to within an interval)
        assertThat(t.sampleCount()).isBetween(200L, 201L);
        assertThat(t.sampleCount("a")).isBetween(200L, 201L);

        LatencyTracker capped = LatencyTracker.builder()
                .ticker(time)
                .minWindowSamples(100_000)
                .maxWindowAge(Duration.ofMinutes(2))
                .build();
        for (int s = 0; s < 600; s++) {
            capped.record(MS);
            nextRefresh();
            capped.sampleCount();
        }
        assertThat(capped.sampleCount()).isBetween(119L, 120L); // never older than maxWindowAge
    }

    @Test
    void should_keep_the_samples_its_delay_policy_asks_for_when_sized_for_it() {
        DelayPolicy p99 = DelayPolicy.percentile(0.99).build();
        LatencyTracker sized = LatencyTracker.builder().sizedFor(p99).build();
        assertThat(sized.minWindowSamples()).isEqualTo(30_000).isEqualTo(p99.windowSamples());
        assertThat(sized.maxWindowAge()).isEqualTo(Duration.ofHours(1));

        // Cassandra's MIN(99p,50ms) and MAX(99p,50ms) read the p99: as many samples as 99p alone
        assertThat(LatencyTracker.builder()
                        .sizedFor(DelayPolicy.parse("MIN(99p,50ms)"))
                        .build()
                        .minWindowSamples())
                .isEqualTo(30_000);
        assertThat(LatencyTracker.builder()
                        .sizedFor(DelayPolicy.max(DelayPolicy.fixed(Duration.ofMillis(5)), p99))
                        .build()
                        .minWindowSamples())
                .isEqualTo(30_000);
        // a policy that reads no latency keeps the builder's 1000, still for up to an hour
        LatencyTracker fixed = LatencyTracker.builder()
                .sizedFor(DelayPolicy.fixed(Duration.ofMillis(5)))
                .build();
        assertThat(fixed.minWindowSamples()).isEqualTo(1_000);
        assertThat(fixed.maxWindowAge()).isEqualTo(Duration.ofHours(1));
        // a window longer than an hour is kept whole
        LatencyTracker longWindow = LatencyTracker.builder()
                .refreshInterval(Duration.ofSeconds(10))
                .window(Duration.ofMinutes(90))
                .sizedFor(p99)
                .build();
        assertThat(longWindow.maxWindowAge()).isEqualTo(Duration.ofMinutes(90));
    }

    @Test
    void should_keep_a_sized_window_for_an_hour_when_the_rate_is_too_low_to_fill_it() {
        LatencyTracker t = LatencyTracker.builder()
                .ticker(time)
                .sizedFor(DelayPolicy.percentile(0.99).build())
                .build();
        for (int s = 0; s < 5_400; s++) { // one sample per second for 90 minutes
            t.record("a", MS);
            nextRefresh();
            t.sampleCount();
        }
        // fewer than the 30,000 samples a p99 asks for: everything from the last hour
        assertThat(t.sampleCount()).isBetween(3_599L, 3_600L);
        assertThat(t.sampleCount("a")).isBetween(3_599L, 3_600L);
    }

    // ------------------------------------------------------------------ targets

    @Test
    void should_track_targets_apart_from_cluster_when_targets_are_given() {
        LatencyTracker t = tracker();
        for (int i = 0; i < 100; i++) {
            t.record("a", MS);
            t.record("b", 5 * MS);
            t.record(null, 3 * MS);
            t.record(3 * MS);
        }
        nextRefresh();

        assertThat(t.sampleCount()).isEqualTo(400);
        assertThat(t.sampleCount("a")).isEqualTo(100);
        assertThat(t.sampleCount("b")).isEqualTo(100);
        assertThat(t.percentileNanos(0.5, "a")).isCloseTo(MS, withinPercentage(2));
        assertThat(t.percentileNanos(0.5, "b")).isCloseTo(5 * MS, withinPercentage(2));
        assertThat(t.percentileNanos(0.6, "b")).isCloseTo(5 * MS, withinPercentage(2));
        assertThat(t.percentileNanos(0.5)).isCloseTo(3 * MS, withinPercentage(2));
        assertThat(t.summary("a").count()).isEqualTo(100);
        assertThat(t.summary("b").p99Nanos()).isCloseTo(5 * MS, withinPercentage(2));
        assertThat(t.targetSummaries()).containsOnlyKeys("a", "b");
        assertThat(t.targetSummaries().get("a")).isEqualTo(t.summary("a"));
    }

    @Test
    void should_report_nothing_when_target_is_unknown() {
        LatencyTracker t = tracker();
        t.record("a", MS);
        nextRefresh();

        assertThat(t.sampleCount("zzz")).isZero();
        assertThat(t.percentileNanos(0.99, "zzz")).isEqualTo(-1);
        assertThat(t.percentileNanos(0.42, "zzz")).isEqualTo(-1);
        assertThat(t.summary("zzz")).isSameAs(LatencySummary.EMPTY);
        assertThat(t.sampleCount(null)).isZero();
        assertThat(t.summary(null)).isSameAs(LatencySummary.EMPTY);
        assertThat(t.percentileNanos(0.99, null)).isEqualTo(-1);
    }

    @Test
    void should_return_healthy_target_percentile_as_lower_median_when_one_of_three_targets_is_10x_slower() {
        LatencyTracker t = tracker();
        for (int i = 1; i <= 1000; i++) {
            long base = i * US; // 1 us .. 1 ms
            t.record("healthy-1", base);
            t.record("healthy-2", base + base / 5);
            t.record("slow", base * 10);
        }
        nextRefresh();

        long median = t.medianTargetPercentileNanos(0.99, 100);

        assertThat(median).isEqualTo(t.percentileNanos(0.99, "healthy-2"));
        assertThat(median).isCloseTo(1188 * US, withinPercentage(2));
        assertThat(t.percentileNanos(0.99)).isGreaterThan(median);
    }

    @Test
    void should_take_lower_of_two_when_two_targets_qualify() {
        LatencyTracker t = tracker();
        for (int i = 0; i < 10; i++) {
            t.record("fast", MS);
            t.record("slow", 8 * MS);
        }
        nextRefresh();

        assertThat(t.medianTargetPercentileNanos(0.9, 10)).isEqualTo(t.percentileNanos(0.9, "fast"));
    }

    @Test
    void should_leave_out_targets_with_too_few_samples_when_computing_median() {
        LatencyTracker t = tracker();
        for (int i = 0; i < 100; i++) {
            t.record("busy", 2 * MS);
        }
        for (int i = 0; i < 5; i++) {
            t.record("quiet-1", 50 * US);
            t.record("quiet-2", 60 * US);
        }
        nextRefresh();

        assertThat(t.medianTargetPercentileNanos(0.99, 10)).isCloseTo(2 * MS, withinPercentage(2));
        assertThat(t.medianTargetPercentileNanos(0.99, 1)).isCloseTo(60 * US, withinPercentage(2));
        assertThat(t.medianTargetPercentileNanos(0.99, 1000)).isEqualTo(-1);
    }

    @Test
    void should_keep_median_updated_when_targets_change_after_first_request() {
        LatencyTracker t = tracker(Duration.ofSeconds(5), Duration.ofSeconds(1));
        for (int i = 0; i < 20; i++) {
            t.record("a", MS);
        }
        nextRefresh();
        assertThat(t.medianTargetPercentileNanos(0.5, 20)).isCloseTo(MS, withinPercentage(2));

        time.advance(Duration.ofSeconds(10)); // a's samples leave the window
        for (int i = 0; i < 20; i++) {
            t.record("b", 4 * MS);
            t.record("c", 6 * MS);
            t.record("d", 9 * MS);
        }
        nextRefresh();
        assertThat(t.medianTargetPercentileNanos(0.5, 20)).isCloseTo(6 * MS, withinPercentage(2));
    }

    @Test
    void should_stay_correct_when_more_distinct_median_keys_than_cached_are_requested() {
        LatencyTracker t = tracker();
        for (int i = 0; i < 100; i++) {
            t.record("a", MS);
            t.record("b", 2 * MS);
            t.record("c", 3 * MS);
        }
        nextRefresh();

        for (int minSamples = 0; minSamples < 150; minSamples++) {
            long expected = minSamples <= 100 ? 2 * MS : -1;
            if (expected < 0) {
                assertThat(t.medianTargetPercentileNanos(0.5, minSamples)).isEqualTo(-1);
            } else {
                assertThat(t.medianTargetPercentileNanos(0.5, minSamples)).isCloseTo(expected, withinPercentage(2));
            }
        }
    }

    @Test
    void should_average_the_agreeing_targets_and_leave_out_a_slow_one_when_taking_the_consensus() {
        LatencyTracker t = tracker();
        for (int i = 1; i <= 1000; i++) {
            long base = i * US; // 1 us .. 1 ms
            t.record("healthy-1", base);
            t.record("healthy-2", base + base / 5); // 1.2x: within 1.25x of the median, counts
            t.record("slow", base * 2); // 2x: left out
        }
        nextRefresh();

        long h1 = t.percentileNanos(0.99, "healthy-1");
        long h2 = t.percentileNanos(0.99, "healthy-2");
        assertThat(t.consensusTargetPercentileNanos(0.99, 100)).isCloseTo((h1 + h2) / 2, within(1L));
        assertThat(t.medianTargetPercentileNanos(0.99, 100)).isEqualTo(h2);
    }

    @Test
    void should_weight_each_agreeing_target_by_its_samples_when_taking_the_consensus() {
        LatencyTracker t = tracker();
        for (int i = 0; i < 300; i++) {
            t.record("busy", 10 * MS);
        }
        for (int i = 0; i < 100; i++) {
            t.record("quiet", 12 * MS);
        }
        nextRefresh();

        long busy = t.percentileNanos(0.5, "busy");
        long quiet = t.percentileNanos(0.5, "quiet");
        assertThat(t.consensusTargetPercentileNanos(0.5, 100)).isCloseTo((3 * busy + quiet) / 4, within(1L));
        assertThat(t.consensusTargetPercentileNanos(0.5, 101)).isEqualTo(busy);
        assertThat(t.consensusTargetPercentileNanos(0.5, 301)).isEqualTo(-1);
    }

    @Test
    void should_take_the_median_target_alone_when_no_other_target_agrees_with_it() {
        LatencyTracker t = tracker();
        for (int i = 0; i < 100; i++) {
            t.record("fast", MS);
            t.record("middle", 2 * MS);
            t.record("slow", 4 * MS);
        }
        nextRefresh();

        assertThat(t.consensusTargetPercentileNanos(0.5, 100)).isEqualTo(t.percentileNanos(0.5, "middle"));
        for (int minSamples = 0; minSamples < 150; minSamples++) { // more keys than are cached
            long expected = minSamples <= 100 ? t.percentileNanos(0.5, "middle") : -1;
            assertThat(t.consensusTargetPercentileNanos(0.5, minSamples)).isEqualTo(expected);
        }
    }

    @Test
    void should_record_cluster_wide_only_when_max_targets_is_reached() {
        LatencyTracker t = LatencyTracker.builder().ticker(time).maxTargets(2).build();
        t.record("a", MS);
        t.record("b", MS);
        t.record("c", MS);
        t.record("c", MS);
        nextRefresh();

        assertThat(t.sampleCount()).isEqualTo(4);
        assertThat(t.targetSummaries()).containsOnlyKeys("a", "b");
        assertThat(t.sampleCount("c")).isZero();
        assertThat(t.summary("c")).isEqualTo(LatencySummary.EMPTY);
    }

    @Test
    void should_forget_idle_target_and_admit_new_one_when_target_had_no_samples_for_a_window() {
        LatencyTracker t = LatencyTracker.builder()
                .ticker(time)
                .maxTargets(1)
                .window(Duration.ofSeconds(10))
                .minWindowSamples(0)
                .build();
        t.record("old", MS);
        nextRefresh();
        assertThat(t.targetSummaries()).containsOnlyKeys("old");

        time.advance(Duration.ofSeconds(11));
        assertThat(t.targetSummaries()).isEmpty();

        t.record("new", 2 * MS);
        nextRefresh();
        assertThat(t.targetSummaries()).containsOnlyKeys("new");
        assertThat(t.percentileNanos(0.5, "new")).isCloseTo(2 * MS, withinPercentage(2));
    }

    @Test
    void should_keep_target_when_it_still_has_samples_in_window() {
        LatencyTracker t = LatencyTracker.builder()
                .ticker(time)
                .maxTargets(1)
                .window(Duration.ofSeconds(10))
                .build();
        for (int s = 0; s < 30; s++) {
            if (s % 5 == 0) {
                t.record("steady", MS);
            }
            nextRefresh();
            assertThat(t.targetSummaries()).as("at %s s", s).containsOnlyKeys("steady");
        }
    }

    // ------------------------------------------------------------------ concurrency

    @Test
    void should_lose_no_sample_when_many_threads_record_while_another_refreshes() throws Exception {
        LatencyTracker t = LatencyTracker.builder()
                .ticker(time)
                .window(Duration.ofMinutes(10))
                .refreshInterval(Duration.ofSeconds(1))
                .build();
        int threads = 8;
        int perThread = 200_000;
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            String target = "t" + (w % 3);
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        t.record(target, 1000 + (i % 5000) * US);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            thread.start();
            writers.add(thread);
        }
        Thread refresher = new Thread(() -> {
            try {
                start.await();
                long seen = 0;
                while (!done.get()) {
                    if (time.nanoTime() < Duration.ofMinutes(5).toNanos()) {
                        time.advance(Duration.ofMillis(250)); // every sample stays inside the window
                    }
                    long count = t.sampleCount();
                    if (count < seen) {
                        throw new AssertionError("count went down from " + seen + " to " + count);
                    }
                    seen = count;
                    t.percentileNanos(0.99);
                    t.medianTargetPercentileNanos(0.9, 1);
                    Thread.onSpinWait();
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        });
        refresher.start();
        start.countDown();
        for (Thread w : writers) {
            w.join();
        }
        done.set(true);
        refresher.join();
        nextRefresh();

        assertThat(failure.get()).isNull();
        assertThat(time.nanoTime()).isLessThan(Duration.ofMinutes(10).toNanos());
        assertThat(t.sampleCount()).isEqualTo((long) threads * perThread);
        long perTargetTotal = t.sampleCount("t0") + t.sampleCount("t1") + t.sampleCount("t2");
        assertThat(perTargetTotal).isEqualTo((long) threads * perThread);
        assertThat(t.sampleCount("t0")).isEqualTo(3L * perThread);
    }

    // ------------------------------------------------------------------ validation

    @Test
    void should_fail_with_setting_range_and_value_when_window_is_not_positive() {
        assertThatThrownBy(() -> LatencyTracker.builder().window(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("window must be > 0, was PT0S");
        assertThatThrownBy(() -> LatencyTracker.builder().window(Duration.ofSeconds(-1)))
                .hasMessage("window must be > 0, was PT-1S");
        assertThatThrownBy(() -> LatencyTracker.builder().window(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("window must not be null");
    }

    @Test
    void should_fail_with_setting_range_and_value_when_refresh_interval_is_invalid() {
        assertThatThrownBy(() -> LatencyTracker.builder().refreshInterval(Duration.ofMillis(-5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("refreshInterval must be > 0, was PT-0.005S");
        assertThatThrownBy(() -> LatencyTracker.builder()
                        .window(Duration.ofSeconds(1))
                        .refreshInterval(Duration.ofSeconds(2))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("refreshInterval must be <= window (PT1S), was PT2S");
        assertThatThrownBy(() -> LatencyTracker.builder()
                        .window(Duration.ofSeconds(30))
                        .refreshInterval(Duration.ofMillis(10))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("window / refreshInterval must be <= 600 slices, was 3000 (window PT30S,"
                        + " refreshInterval PT0.01S)");
    }

    @Test
    void should_fail_with_setting_range_and_value_when_max_targets_or_ticker_is_invalid() {
        assertThatThrownBy(() -> LatencyTracker.builder().maxTargets(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxTargets must be >= 1, was 0");
        assertThatThrownBy(() -> LatencyTracker.builder().ticker(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("ticker must not be null");
    }

    @Test
    void should_fail_with_range_and_value_when_percentile_or_min_samples_is_invalid() {
        LatencyTracker t = tracker();
        assertThatThrownBy(() -> t.percentileNanos(1.5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("percentile must be in (0, 1), was 1.5");
        assertThatThrownBy(() -> t.percentileNanos(0, "a")).hasMessage("percentile must be in (0, 1), was 0");
        assertThatThrownBy(() -> t.percentileNanos(Double.NaN)).hasMessage("percentile must be in (0, 1), was NaN");
        assertThatThrownBy(() -> t.medianTargetPercentileNanos(1, 1)).hasMessage("percentile must be in (0, 1), was 1");
        assertThatThrownBy(() -> t.medianTargetPercentileNanos(0.5, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("minSamples must be >= 0, was -1");
        assertThatThrownBy(() -> t.consensusTargetPercentileNanos(0, 1))
                .hasMessage("percentile must be in (0, 1), was 0");
        assertThatThrownBy(() -> t.consensusTargetPercentileNanos(0.5, -2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("minSamples must be >= 0, was -2");
    }

    @Test
    void should_build_working_tracker_with_documented_defaults_when_of_defaults_is_used() {
        LatencyTracker t = LatencyTracker.ofDefaults();

        assertThat(t.window()).isEqualTo(Duration.ofSeconds(30));
        assertThat(t.refreshInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(t.maxTargets()).isEqualTo(1024);
        t.record("a", MS);
        assertThat(t.sampleCount()).isBetween(0L, 1L);
        assertThat(t.toString()).contains("window=PT30S");
    }

    @Test
    void should_allow_reusing_builder_when_building_twice() {
        LatencyTracker.Builder b = LatencyTracker.builder().ticker(time).window(Duration.ofSeconds(5));
        LatencyTracker first = b.build();
        LatencyTracker second = b.window(Duration.ofSeconds(7)).build();

        assertThat(first.window()).isEqualTo(Duration.ofSeconds(5));
        assertThat(second.window()).isEqualTo(Duration.ofSeconds(7));
        assertThat(first.sampleCount()).isZero();
    }
}

package io.github.hedge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * {@link SlidingBucketWindow#valuesAt(double[], long[], long[], double[])}: where the Kaplan–Meier
 * estimate places each percentile, and how well (Greenwood's relative standard error of the
 * estimated survival there).
 */
class SlidingBucketWindowErrorTest {
    private static final int B = LogLinearBuckets.BUCKET_COUNT;
    private static final long MS = 1_000_000L;

    private static SlidingBucketWindow window(long[] observedMs, long[] censoredMs) {
        SliceCollector c = new SliceCollector();
        for (long v : observedMs) {
            c.add(LogLinearBuckets.indexOf(v * MS), 1);
        }
        for (long v : censoredMs) {
            c.add(B + LogLinearBuckets.indexOf(v * MS), 1);
        }
        SlidingBucketWindow w = new SlidingBucketWindow(10);
        w.advance(1, c.takeSlice());
        return w;
    }

    private static double[] errorsAt(SlidingBucketWindow w, double... ps) {
        long[] values = new long[ps.length];
        double[] errors = new double[ps.length];
        w.valuesAt(ps, values, null, errors);
        return errors;
    }

    @Test
    void should_give_the_binomial_error_of_the_survival_when_nothing_is_censored() {
        long[] observed = new long[10_000];
        for (int i = 0; i < observed.length; i++) {
            observed[i] = 1 + i / 100; // 100 samples at each of 1..100 ms
        }
        SlidingBucketWindow w = window(observed, new long[0]);

        // p90 lands on the bucket of 90 ms, which leaves 1,000 samples above: sqrt(0.9 / 1000)
        assertThat(errorsAt(w, 0.9)[0]).isCloseTo(Math.sqrt(0.9 / 1000), within(1e-9));
        // the top bucket (survival 0): the error before it plus 1 / (samples at risk)
        assertThat(errorsAt(w, 0.999)[0]).isCloseTo(Math.sqrt((2 - 0.01) / (10_000 * 0.01)), within(1e-9));
    }

    @Test
    void should_add_greenwood_terms_over_the_events_when_samples_are_censored() {
        // 4 observed at 1, 2, 3, 4 ms, 2 censored at 2 ms (at risk for half of that bucket).
        // At risk: 6 at 1 ms, 5 - 2/2 = 4 at 2 ms, 2 at 3 ms, 1 at 4 ms; one event each
        SlidingBucketWindow w = window(new long[] {1, 2, 3, 4}, new long[] {2, 2});

        double[] e = errorsAt(w, 0.1, 0.3, 0.6, 0.9);
        double g1 = 1.0 / (6 * 5);
        double g2 = g1 + 1.0 / (4 * 3);
        double g3 = g2 + 1.0 / (2 * 1);
        assertThat(e[0]).isCloseTo(Math.sqrt(g1), within(1e-9)); // survival 5/6 after 1 ms
        assertThat(e[1]).isCloseTo(Math.sqrt(g2), within(1e-9)); // 5/6 * 3/4 = 5/8 after 2 ms
        assertThat(e[2]).isCloseTo(Math.sqrt(g3), within(1e-9)); // 5/16 after 3 ms
        // the last sample at risk answers: survival 0, and the bucket adds 1 / (1 at risk)
        assertThat(e[3]).isCloseTo(Math.sqrt(g3 + 1.0), within(1e-9));
    }

    @Test
    void should_count_samples_censored_in_a_bucket_at_risk_for_half_of_it_when_placing_a_percentile() {
        // as above: the survival after 2 ms is 5/6 * (1 - 1/4) = 5/8, a distribution function of
        // 0.375. Counted for the whole bucket (5 at risk) it would be 5/6 * 4/5 = 2/3, and p35
        // would move up to the next sample's bucket, 3 ms
        SlidingBucketWindow w = window(new long[] {1, 2, 3, 4}, new long[] {2, 2});

        assertThat(w.valueAt(0.35)).isEqualTo(LogLinearBuckets.highestValue(LogLinearBuckets.indexOf(2 * MS)));
        assertThat(w.valueAt(0.38)).isEqualTo(LogLinearBuckets.highestValue(LogLinearBuckets.indexOf(3 * MS)));
        // without censored samples the empirical percentile: 2 of 4 at or below 2 ms
        SlidingBucketWindow plain = window(new long[] {1, 2, 3, 4}, new long[0]);
        assertThat(plain.valueAt(0.5)).isEqualTo(LogLinearBuckets.highestValue(LogLinearBuckets.indexOf(2 * MS)));
    }

    @Test
    void should_report_an_infinite_error_when_the_estimate_never_reaches_the_percentile() {
        // the top of the window is censored: the survival stays at 1/2
        SlidingBucketWindow w = window(new long[] {1, 2}, new long[] {5, 6});

        double[] e = errorsAt(w, 0.25, 0.9);
        assertThat(e[0]).isFinite();
        assertThat(e[1]).isInfinite();
    }
}

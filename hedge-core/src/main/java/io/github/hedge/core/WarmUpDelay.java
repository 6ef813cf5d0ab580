package io.github.hedge.core;

/**
 * A {@link PercentileDelay}'s delay while its percentile is not trusted yet (the default {@link
 * PercentileDelay#fallback()}): a bound built only from what few samples already show, read from
 * the same {@link LatencyTracker}, so every adapter and entry point warms up alike.
 *
 * <p><b>Rule.</b> With {@code m} the lower median, over the targets that answered, of each target's
 * median latency, and {@code q(l)} the lower median of the targets' {@code l}-th percentiles over
 * the targets with {@code 5 / (1 - l)} samples (the same trust rule as the percentile's):
 *
 * <pre>{@code delay = max(STALL_FACTOR * m, q(1 - 5 (1 - p)), q(1 - 2.5 (1 - p)))}</pre>
 *
 * where a {@code q} whose level has too few samples is left out. A target's first answer is not a
 * sample ({@link LatencyTracker#recordAnswer}: it measured the connection too), but it bounds the
 * target's latency from above: a target whose only answer is its first counts with it in {@code
 * m} when that lowers {@code m}, and before any sample the first answers alone give {@code m}. No
 * hedge is sent before the first answer (nothing is known). For the default p96 the levels are
 * p80 (25 samples per target) and p90 (50).
 *
 * <ul>
 *   <li>{@code 4 x median} is a stall test: a call four times slower than the typical answer is
 *       stalled on any distribution whose p96 lies below it (lognormal up to sigma 0.79), and is
 *       hedged from the first answer on.
 *   <li>The {@code q} terms are lower bounds of the percentile that the samples already support: the
 *       delay never sits below them, so on a tail heavier than the stall test assumes, demand for
 *       hedges falls toward the budget as the samples come in, and the delay meets the percentile
 *       continuously when it becomes trusted.
 *   <li>Medians over targets, lower medians across them: one slow target of three (or of two) cannot
 *       lift the delay. When the adapter reports no targets, the pooled median stands in and the
 *       stall test alone decides: pooled upper percentiles cannot tell a heavy tail from a slow
 *       target, and would follow a slow third of the samples.
 * </ul>
 *
 * <p>Immutable and thread-safe; reads the tracker's cached values only.
 */
final class WarmUpDelay implements DelayPolicy {
    /** The multiple of the median answer beyond which a call counts as stalled. */
    static final double STALL_FACTOR = 4;

    /** Multiples of {@code 1 - p} for the supported levels, lowest level first. */
    private static final double[] LEVEL_FACTORS = {5, 2.5};

    private final double[] levels;
    private final long[] levelSamples;

    WarmUpDelay(double percentile) {
        int n = 0;
        double[] l = new double[LEVEL_FACTORS.length];
        long[] s = new long[LEVEL_FACTORS.length];
        for (double f : LEVEL_FACTORS) {
            double level = 1 - f * (1 - percentile);
            if (level > 0.5) {
                l[n] = level;
                s[n] = PercentileDelay.samplesFor(level, 1);
                n++;
            }
        }
        this.levels = java.util.Arrays.copyOf(l, n);
        this.levelSamples = java.util.Arrays.copyOf(s, n);
    }

    @Override
    public long delayNanos(DelayContext context) {
        LatencyTracker tracker = context.latency();
        boolean targets = true;
        long median = tracker.medianTargetPercentileNanos(0.5, 1);
        // targets that answered once bound their latency by that answer: a slow target that
        // answered twice cannot hold the median up while the others have answered once, and the
        // first answers alone bound it before any sample
        long bounded = tracker.medianOrFirstAnswerNanos();
        if (bounded >= 0 && (median < 0 || bounded < median)) {
            median = bounded;
        }
        if (median < 0) {
            targets = false;
            median = tracker.sampleCount() > 0 ? tracker.percentileNanos(0.5) : -1;
        }
        if (median < 0) {
            return NO_HEDGE;
        }
        double stall = STALL_FACTOR * median;
        long delay = stall >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) stall;
        if (!targets) {
            // pooled samples cannot tell a heavy tail from a slow target: their upper percentiles
            // would follow the slow one (a third of the samples), so the stall test alone decides
            return delay;
        }
        for (int i = 0; i < levels.length; i++) {
            long q = tracker.medianTargetPercentileNanos(levels[i], levelSamples[i]);
            if (q > delay) {
                delay = q;
            }
        }
        return delay;
    }

    @Override
    public String toString() {
        return "warm-up(max of " + (long) STALL_FACTOR + " x the lower median target's median and its supported"
                + " percentiles " + java.util.Arrays.toString(levels) + "; no hedge before the first answer)";
    }
}

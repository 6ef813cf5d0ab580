package io.github.hedge.core.internal;

import io.github.hedge.core.LatencySummary;
import java.util.Arrays;
import java.util.Map;

/**
 * Everything the readers of a {@code LatencyTracker} see, built by {@link TrackerEstimates} at a
 * refresh and published through one volatile write: each window's registered percentiles, count
 * and summary, and the median and consensus of the targets' percentiles. Also the estimators'
 * arithmetic (lower median, consensus). Internal: not part of the public API. Immutable.
 */
public final class TrackerSnapshot {
    /** Percentiles every snapshot holds, for {@link LatencySummary}. */
    static final double[] SUMMARY_PS = {0.5, 0.9, 0.95, 0.99, 0.999};
    /**
     * How far (as a factor) a target's percentile may lie from the median target's and still count
     * in the consensus: wide enough for the sampling error of alike targets (about 5% at 300
     * samples beyond the percentile, more while warming up), narrow enough that a target slow
     * enough to matter is left out.
     */
    private static final double CONSENSUS_FACTOR = 1.25;

    final double[] ps;
    final long registryVersion;
    final long clusterExclusionVersion;
    final View cluster;
    final Map<String, View> targets;
    final Map<String, LatencySummary> summaries;
    final double[] medianPs;
    final long[] medianMins;
    final long[] medianValues;
    final long[] consensusValues;

    TrackerSnapshot(
            double[] ps,
            long registryVersion,
            long clusterExclusionVersion,
            View cluster,
            Map<String, View> targets,
            Map<String, LatencySummary> summaries,
            double[] medianPs,
            long[] medianMins,
            long[] medianValues,
            long[] consensusValues) {
        this.ps = ps;
        this.registryVersion = registryVersion;
        this.clusterExclusionVersion = clusterExclusionVersion;
        this.cluster = cluster;
        this.targets = targets;
        this.summaries = summaries;
        this.medianPs = medianPs;
        this.medianMins = medianMins;
        this.medianValues = medianValues;
        this.consensusValues = consensusValues;
    }

    /** @return the samples in the cluster-wide window, observed and censored */
    public long sampleCount() {
        return cluster.count;
    }

    /** @return the censored samples in the cluster-wide window */
    public long censoredCount() {
        return cluster.censored;
    }

    /** @return the samples in {@code target}'s window; 0 when the target is unknown */
    public long sampleCount(String target) {
        View v = target == null ? null : targets.get(target);
        return v == null ? 0 : v.count;
    }

    /** @return the cluster-wide summary */
    public LatencySummary summary() {
        return cluster.summary;
    }

    /** @return {@code target}'s summary; {@link LatencySummary#EMPTY} when unknown or empty */
    public LatencySummary summary(String target) {
        View v = target == null ? null : targets.get(target);
        return v == null ? LatencySummary.EMPTY : v.summary;
    }

    /** @return an immutable map from every tracked target to its summary */
    public Map<String, LatencySummary> summaries() {
        return summaries;
    }

    /** @return how many targets this snapshot holds */
    public int targetCount() {
        return targets.size();
    }

    /** The values of one window at {@code registeredPs}, or {@code old} when the window did not change. */
    static View view(double[] registeredPs, SlidingBucketWindow w, View old, long[] excluded, boolean stale) {
        if (old != null && old.window == w && old.windowVersion == w.version()) {
            return old;
        }
        long[] values = new long[registeredPs.length];
        if (stale) {
            Arrays.fill(values, -1L);
        } else {
            w.valuesAt(registeredPs, values, excluded);
        }
        long count = w.total();
        LatencySummary summary = count == 0 || values[0] < 0
                ? LatencySummary.EMPTY
                : new LatencySummary(
                        count,
                        values[indexOf(registeredPs, 0.5)],
                        values[indexOf(registeredPs, 0.9)],
                        values[indexOf(registeredPs, 0.95)],
                        values[indexOf(registeredPs, 0.99)],
                        values[indexOf(registeredPs, 0.999)],
                        w.max());
        return new View(count, w.censored(), values, summary, w, w.version(), stale);
    }

    static long lowerMedian(long[] values, int n) {
        if (n == 0) {
            return -1;
        }
        Arrays.sort(values, 0, n);
        return values[(n - 1) / 2];
    }

    /**
     * The sample-weighted mean of {@code values[0..n)} within a factor {@link #CONSENSUS_FACTOR} of
     * {@code median} (one of them), or -1 when {@code n == 0}.
     */
    static long consensus(long[] values, long[] counts, int n, long median) {
        if (n == 0 || median < 0) {
            return -1;
        }
        double weighted = 0;
        double weight = 0;
        for (int i = 0; i < n; i++) {
            long v = values[i];
            if (v <= median * CONSENSUS_FACTOR && v * CONSENSUS_FACTOR >= median) {
                weighted += (double) v * counts[i];
                weight += counts[i];
            }
        }
        return Math.round(weighted / weight);
    }

    static int indexOf(double[] ps, double p) {
        for (int i = 0; i < ps.length; i++) {
            if (ps[i] == p) {
                return i;
            }
        }
        return -1;
    }

    /** Cached values of one window, aligned with the snapshot's registered percentiles. Immutable. */
    static final class View {
        final long count;
        final long censored;
        final long[] values;
        final LatencySummary summary;
        final SlidingBucketWindow window; // identity only: read under the lock, never by readers
        final long windowVersion;
        final boolean stale;

        View(
                long count,
                long censored,
                long[] values,
                LatencySummary summary,
                SlidingBucketWindow window,
                long windowVersion,
                boolean stale) {
            this.count = count;
            this.censored = censored;
            this.values = values;
            this.summary = summary;
            this.window = window;
            this.windowVersion = windowVersion;
            this.stale = stale;
        }
    }
}

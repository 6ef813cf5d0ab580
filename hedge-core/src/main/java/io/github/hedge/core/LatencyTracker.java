package io.github.hedge.core;

import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.Map;

/**
 * Recent per-attempt latency, cluster-wide and per target, over a sliding time window.
 * (API shell: implementation in progress.)
 */
public final class LatencyTracker {
    private LatencyTracker() {}

    public static Builder builder() {
        return new Builder();
    }

    public static LatencyTracker ofDefaults() {
        return builder().build();
    }

    /** Records one sample cluster-wide only. */
    public void record(long latencyNanos) {
        throw new UnsupportedOperationException();
    }

    /** Records one sample cluster-wide and, when target is non-null, for that target. */
    public void record(String target, long latencyNanos) {
        throw new UnsupportedOperationException();
    }

    /** Cached p-th percentile (p in (0,1)) of the cluster-wide window, in ns; -1 when the window is empty. */
    public long percentileNanos(double p) {
        throw new UnsupportedOperationException();
    }

    /** Cached p-th percentile for one target, in ns; -1 when that target's window is empty or unknown. */
    public long percentileNanos(double p, String target) {
        throw new UnsupportedOperationException();
    }

    /**
     * Cached lower median, over targets with at least {@code minSamples} samples, of each target's own
     * p-th percentile, in ns; -1 when no target qualifies.
     */
    public long medianTargetPercentileNanos(double p, long minSamples) {
        throw new UnsupportedOperationException();
    }

    /** Samples in the cluster-wide window. */
    public long sampleCount() {
        throw new UnsupportedOperationException();
    }

    /** Samples in one target's window; 0 when unknown. */
    public long sampleCount(String target) {
        throw new UnsupportedOperationException();
    }

    public LatencySummary summary() {
        throw new UnsupportedOperationException();
    }

    public LatencySummary summary(String target) {
        throw new UnsupportedOperationException();
    }

    public Map<String, LatencySummary> targetSummaries() {
        throw new UnsupportedOperationException();
    }

    public static final class Builder {
        public Builder window(Duration window) {
            return this;
        }

        public Builder refreshInterval(Duration interval) {
            return this;
        }

        public Builder ticker(Ticker ticker) {
            return this;
        }

        public Builder maxTargets(int maxTargets) {
            return this;
        }

        public LatencyTracker build() {
            return new LatencyTracker();
        }
    }
}

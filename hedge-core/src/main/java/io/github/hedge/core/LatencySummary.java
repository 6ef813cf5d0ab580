package io.github.hedge.core;

/**
 * A snapshot of recent latency over a tracker's window. All latencies in nanoseconds; each is -1
 * when {@code count == 0}. Immutable.
 *
 * @param count samples in the window
 * @param p50Nanos median
 * @param p90Nanos 90th percentile
 * @param p95Nanos 95th percentile
 * @param p99Nanos 99th percentile
 * @param p999Nanos 99.9th percentile
 * @param maxNanos largest sample
 */
public record LatencySummary(
        long count, long p50Nanos, long p90Nanos, long p95Nanos, long p99Nanos, long p999Nanos, long maxNanos) {
    /** The summary of an empty window. */
    public static final LatencySummary EMPTY = new LatencySummary(0, -1, -1, -1, -1, -1, -1);
}

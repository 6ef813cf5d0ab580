package io.github.hedge.core.internal;

import java.util.concurrent.TimeUnit;

/**
 * The bucket layout shared by the latency tracker's recorders and windows: log-linear buckets over
 * nanosecond values from 0 to {@link #MAX_VALUE} (one hour). Values below 128 ns each have their own
 * bucket; above, every power of two is split into 64 equal sub-buckets, so a bucket is at most
 * 1/64 (1.6 %) as wide as its lowest value. 2,345 buckets in all.
 *
 * <p>Internal: not part of the public API. Thread-safe (stateless).
 */
public final class LogLinearBuckets {
    /** The largest trackable value, one hour in nanoseconds; larger values are clamped to it. */
    public static final long MAX_VALUE = TimeUnit.HOURS.toNanos(1);

    private static final int SUB_BITS = 6;
    private static final int SUB_COUNT = 1 << SUB_BITS;
    private static final long EXACT_LIMIT = 2L * SUB_COUNT;

    /** Number of buckets: every index returned by {@link #indexOf} is below it. */
    public static final int BUCKET_COUNT = indexOf(MAX_VALUE) + 1;

    private LogLinearBuckets() {}

    /**
     * @param nanos a latency in nanoseconds; negative values count as 0, values above {@link
     *     #MAX_VALUE} as {@link #MAX_VALUE}
     * @return the index of the bucket holding it, in {@code [0, BUCKET_COUNT)}
     */
    public static int indexOf(long nanos) {
        long v = nanos < 0 ? 0 : Math.min(nanos, MAX_VALUE);
        if (v < EXACT_LIMIT) {
            return (int) v;
        }
        int shift = 63 - Long.numberOfLeadingZeros(v) - SUB_BITS;
        return (shift << SUB_BITS) + (int) (v >>> shift);
    }

    /** @return the smallest value that falls into bucket {@code index}, in nanoseconds */
    public static long lowestValue(int index) {
        if (index < EXACT_LIMIT) {
            return index;
        }
        int shift = (index >>> SUB_BITS) - 1;
        long sub = (index & (SUB_COUNT - 1)) + SUB_COUNT;
        return sub << shift;
    }

    /**
     * @return the largest value that falls into bucket {@code index}, in nanoseconds, capped at
     *     {@link #MAX_VALUE}: what a percentile reports, so that at least the requested share of
     *     samples is at or below the reported value (HdrHistogram's convention)
     */
    public static long highestValue(int index) {
        if (index < EXACT_LIMIT) {
            return index;
        }
        int shift = (index >>> SUB_BITS) - 1;
        return Math.min(lowestValue(index) + (1L << shift) - 1, MAX_VALUE);
    }
}

package io.github.hedge.core.internal;

import java.util.Arrays;

/**
 * A sliding window of bucket counts ({@link LogLinearBuckets}) made of a ring of per-interval
 * slices (packed by {@link SliceCollector}) and a running sum of the slices in the ring: closing an
 * interval adds the new slice and subtracts the one that falls out, so the sum always equals the
 * window exactly and costs O(distinct buckets touched), not O(window).
 *
 * <p>Memory: the running sum (about 19 KB) exists only while the window holds samples; each slice
 * costs 8 bytes per distinct bucket it touched.
 *
 * <p>Internal: not part of the public API. Not thread-safe: used under the tracker's refresh lock.
 */
public final class SlidingBucketWindow {
    private final long[][] ring;
    private int head;
    private int nonEmptySlices;
    private long[] counts;
    private long total;
    private int highestIndex = -1;
    private long version;

    /** @param sliceCount how many intervals the window spans, at least 1 */
    public SlidingBucketWindow(int sliceCount) {
        if (sliceCount < 1) {
            throw new IllegalArgumentException("sliceCount must be >= 1, was " + sliceCount);
        }
        this.ring = new long[sliceCount][];
    }

    /**
     * Closes {@code intervals} intervals: the first {@code intervals - 1} empty (nothing was
     * drained during them), the last holding {@code slice}. Slices older than the window fall out;
     * a gap at least as long as the window empties it in O(slices).
     *
     * @param intervals at least 1
     * @param slice a packed slice, or {@code null} when the last interval is empty too
     */
    public void advance(long intervals, long[] slice) {
        if (intervals < 1) {
            throw new IllegalArgumentException("intervals must be >= 1, was " + intervals);
        }
        if (nonEmptySlices == 0 && slice == null) {
            return; // nothing in the ring: where the head points does not matter
        }
        if (intervals - 1 >= ring.length) {
            clear();
        } else {
            for (long i = 1; i < intervals && nonEmptySlices > 0; i++) {
                push(null);
            }
        }
        push(slice);
    }

    private void push(long[] slice) {
        long[] expired = ring[head];
        ring[head] = slice;
        head = head + 1 == ring.length ? 0 : head + 1;
        if (expired != null) {
            nonEmptySlices--;
            apply(expired, -1);
        }
        if (slice != null) {
            nonEmptySlices++;
            apply(slice, 1);
        }
    }

    private void apply(long[] slice, long sign) {
        if (counts == null) {
            counts = new long[LogLinearBuckets.BUCKET_COUNT];
        }
        for (long entry : slice) {
            int index = SliceCollector.index(entry);
            long c = SliceCollector.count(entry) * sign;
            counts[index] += c;
            total += c;
            if (sign > 0 && index > highestIndex) {
                highestIndex = index;
            }
        }
        if (total == 0) {
            counts = null; // idle windows keep no 19 KB array
            highestIndex = -1;
        } else if (sign < 0) {
            while (counts[highestIndex] == 0) {
                highestIndex--;
            }
        }
        version++;
    }

    private void clear() {
        Arrays.fill(ring, null);
        nonEmptySlices = 0;
        counts = null;
        total = 0;
        highestIndex = -1;
        version++;
    }

    /** @return the samples in the window */
    public long total() {
        return total;
    }

    /** @return a number that changes whenever the window's content does */
    public long version() {
        return version;
    }

    /**
     * @return the largest value in the window (its bucket's highest value), in nanoseconds, or -1
     *     when the window is empty
     */
    public long max() {
        return highestIndex < 0 ? -1 : LogLinearBuckets.highestValue(highestIndex);
    }

    /**
     * Computes several percentiles in one pass.
     *
     * @param sortedPs percentiles in (0, 1), ascending
     * @param out receives, at the same positions, the value at each percentile in nanoseconds (the
     *     highest value of the bucket holding the {@code ceil(p * total)}-th smallest sample), or -1
     *     for all when the window is empty
     */
    public void valuesAt(double[] sortedPs, long[] out) {
        int n = sortedPs.length;
        if (total == 0) {
            Arrays.fill(out, 0, n, -1L);
            return;
        }
        int j = 0;
        long rank = rank(sortedPs[0], total);
        long cumulative = 0;
        for (int i = 0; i <= highestIndex && j < n; i++) {
            long c = counts[i];
            if (c == 0) {
                continue;
            }
            cumulative += c;
            while (cumulative >= rank) {
                out[j++] = LogLinearBuckets.highestValue(i);
                if (j == n) {
                    return;
                }
                rank = rank(sortedPs[j], total);
            }
        }
    }

    /** @return the value at one percentile p in (0, 1), in nanoseconds; -1 when empty */
    public long valueAt(double p) {
        long[] out = new long[1];
        valuesAt(new double[] {p}, out);
        return out[0];
    }

    /** The 1-based rank of the sample at percentile p: {@code ceil(p * total)} within [1, total]. */
    static long rank(double p, long total) {
        // shave a relative 1e-12 so that p * total landing a rounding error above an integer
        // (0.29 * 100 = 29.000000000000004) does not skip to the next sample
        long r = (long) Math.ceil(p * total * (1 - 1e-12));
        return Math.max(1, Math.min(total, r));
    }
}

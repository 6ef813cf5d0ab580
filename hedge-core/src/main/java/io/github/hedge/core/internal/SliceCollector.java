package io.github.hedge.core.internal;

/**
 * Scratch space for one drain: sums the counts drained from a {@link StripedBucketCounter}'s
 * stripes and packs the non-zero buckets into a compact slice for {@link SlidingBucketWindow}. One
 * instance is reused for every drain of a refresh.
 *
 * <p>A packed slice is a {@code long[]} of entries {@code (count << 13) | index}, one per
 * non-zero index (a bucket index, plus {@link LogLinearBuckets#BUCKET_COUNT} for a censored sample), so an interval costs 8 bytes per distinct bucket it touched.
 *
 * <p>Internal: not part of the public API. Not thread-safe: used under the tracker's refresh lock.
 */
public final class SliceCollector {
    static final int INDEX_BITS = 13;
    static final long INDEX_MASK = (1L << INDEX_BITS) - 1;

    static {
        if (2 * LogLinearBuckets.BUCKET_COUNT > (1 << INDEX_BITS)) {
            throw new AssertionError("bucket index does not fit in " + INDEX_BITS + " bits");
        }
    }

    private final long[] sums = new long[2 * LogLinearBuckets.BUCKET_COUNT];
    private final int[] touched = new int[2 * LogLinearBuckets.BUCKET_COUNT];
    private int touchedCount;

    /** Creates an empty collector. */
    public SliceCollector() {}

    /** Adds {@code count} (> 0) samples to bucket {@code index}. */
    public void add(int index, long count) {
        if (sums[index] == 0) {
            touched[touchedCount++] = index;
        }
        sums[index] += count;
    }

    /**
     * @return the packed slice of everything added since the last call, or {@code null} when
     *     nothing was; the collector is empty again afterwards
     */
    public long[] takeSlice() {
        if (touchedCount == 0) {
            return null;
        }
        long[] slice = new long[touchedCount];
        for (int i = 0; i < touchedCount; i++) {
            int index = touched[i];
            slice[i] = (sums[index] << INDEX_BITS) | index;
            sums[index] = 0;
        }
        touchedCount = 0;
        return slice;
    }

    static int index(long entry) {
        return (int) (entry & INDEX_MASK);
    }

    static long count(long entry) {
        return entry >>> INDEX_BITS;
    }
}

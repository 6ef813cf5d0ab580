package io.github.hedge.core.internal;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The latency tracker's hot path: bucket counts ({@link LogLinearBuckets}) split over a power of two
 * of stripes, each an {@link AtomicLongArray}. A thread picks its stripe from a mixed hash of its
 * id ({@link #probe()}), so threads that record at the same time mostly touch different cache
 * lines; a sample costs one {@code getAndIncrement} and one volatile read. No per-thread state is
 * kept, so millions of virtual threads cost nothing extra.
 *
 * <p>{@link #drainTo} moves the counts out (atomically per bucket, so no sample is lost or counted
 * twice). Internal: not part of the public API. Thread-safe: any number of recording threads, one
 * draining thread at a time.
 */
public final class StripedBucketCounter {
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private final Stripe[] stripes;
    private final int shift;

    /** @param stripeCount a power of two, at least 2 */
    public StripedBucketCounter(int stripeCount) {
        if (stripeCount < 2 || Integer.bitCount(stripeCount) != 1) {
            throw new IllegalArgumentException("stripeCount must be a power of two >= 2, was " + stripeCount);
        }
        this.stripes = new Stripe[stripeCount];
        for (int i = 0; i < stripeCount; i++) {
            stripes[i] = new Stripe();
        }
        this.shift = 64 - Integer.numberOfTrailingZeros(stripeCount);
    }

    /**
     * The smallest power of two, at least {@code min} and at most {@code max}, not below {@code
     * wanted}.
     */
    public static int stripesFor(int wanted, int min, int max) {
        int n = Integer.highestOneBit(Math.max(1, wanted - 1)) << 1;
        return Math.max(min, Math.min(max, n));
    }

    /**
     * The calling thread's probe: its id times the 64-bit golden ratio (Fibonacci hashing, so
     * threads created one after the other land on different stripes). Compute it once per sample
     * and pass it to every counter the sample goes to.
     */
    @SuppressWarnings("deprecation") // Thread.threadId() is Java 19+; getId() is the same value
    public static long probe() {
        return Thread.currentThread().getId() * GOLDEN;
    }

    /** @return how many stripes */
    public int stripeCount() {
        return stripes.length;
    }

    /**
     * Counts one sample.
     *
     * @param probe from {@link #probe()}
     * @param bucket from {@link LogLinearBuckets#indexOf}; plus {@link LogLinearBuckets#BUCKET_COUNT}
     *     for a censored sample (an attempt cancelled after that time)
     */
    public void increment(long probe, int bucket) {
        Stripe s = stripes[(int) (probe >>> shift)];
        s.counts.getAndIncrement(bucket);
        // Set after the increment: a drain that clears the flag before reading this bucket either
        // sees the increment or leaves the flag set for the next drain.
        if (!s.dirty) {
            s.dirty = true;
        }
    }

    /**
     * Moves every count recorded since the last drain into {@code sink} and zeroes it here. Only
     * stripes written since the last drain are scanned. One draining thread at a time.
     *
     * @return whether anything was drained
     */
    public boolean drainTo(SliceCollector sink) {
        boolean any = false;
        for (Stripe s : stripes) {
            if (!s.dirty) {
                continue;
            }
            s.dirty = false;
            AtomicLongArray counts = s.counts;
            for (int i = 0, n = counts.length(); i < n; i++) {
                if (counts.get(i) != 0) {
                    long c = counts.getAndSet(i, 0);
                    if (c != 0) {
                        sink.add(i, c);
                        any = true;
                    }
                }
            }
        }
        return any;
    }

    /** @return whether some stripe has been written since the last drain (a hint, racy by nature) */
    public boolean maybeDirty() {
        for (Stripe s : stripes) {
            if (s.dirty) {
                return true;
            }
        }
        return false;
    }

    private static final class Stripe {
        final AtomicLongArray counts = new AtomicLongArray(2 * LogLinearBuckets.BUCKET_COUNT);
        volatile boolean dirty;
    }
}

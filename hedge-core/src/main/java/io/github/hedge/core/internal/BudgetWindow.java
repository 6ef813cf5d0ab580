package io.github.hedge.core.internal;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The sliding window of a {@code HedgeBudget}: the primaries and hedges of the last window, in
 * {@link #BUCKETS} buckets that rotate lazily when a call sees the ticker pass a bucket boundary
 * (no background thread). It gives the counts the budget's cap rests on: the primaries in the
 * window, and the primaries a whole window would hold at the recent rate.
 *
 * <p>Internal: not part of the public API. Thread-safe: lock-free.
 */
final class BudgetWindow {
    /**
     * Number of buckets in the window. The recent rate that caps saved tokens is read from the last
     * one or two buckets, so this sets how soon the cap follows a falling rate: with 10 (3-6 s of a
     * 30 s window) a closed loop whose backend turned 5x slower spent tokens saved at the old rate
     * for 6 s, hedging 15-25% of its calls at a 5% budget (hedge-benchmarks' {@code closed-shift}
     * and Cassandra {@code SideBySide}); with 30 (1-2 s) for 3 s. Stationary loads do not see the
     * difference (the simulator's {@code sweep}: the same denials in every cell).
     */
    static final int BUCKETS = 30;

    private final long bucketNanos;
    private final long origin;
    private final AtomicReferenceArray<Bucket> ring = new AtomicReferenceArray<>(BUCKETS);
    /** The latest bucket rotated in; a hint for the fast path, never trusted without a range check. */
    private volatile Bucket current;

    /**
     * @param windowNanos the window's length, in ns
     * @param origin the ticker reading at which the window starts
     */
    BudgetWindow(long windowNanos, long origin) {
        this.bucketNanos = Math.max(1, windowNanos / BUCKETS);
        this.origin = origin;
        for (int i = 0; i < BUCKETS; i++) {
            ring.set(i, new Bucket(i - BUCKETS, 0, 0)); // empty, already out of the window
        }
        Bucket first = new Bucket(0, origin, origin + bucketNanos);
        ring.set(0, first);
        this.current = first;
    }

    /** Counts one primary in the bucket of {@code now}; lock-free, O(1) on the common path. */
    void recordPrimary(long now) {
        Bucket c = current;
        if (now >= c.start && now < c.end) {
            c.primaries.increment();
        } else {
            bucketAt(now).primaries.increment();
        }
    }

    long epochOf(long now) {
        long elapsed = now - origin;
        return elapsed <= 0 ? 0 : elapsed / bucketNanos;
    }

    /** The bucket for {@code now}, rotating the ring if the ticker passed into a new bucket. */
    Bucket bucketAt(long now) {
        long epoch = epochOf(now);
        int slot = (int) (epoch % BUCKETS);
        Bucket b = ring.get(slot);
        while (b.epoch < epoch) {
            long start = origin + epoch * bucketNanos;
            Bucket fresh = new Bucket(epoch, start, start + bucketNanos);
            if (ring.compareAndSet(slot, b, fresh)) {
                if (fresh.epoch > current.epoch) {
                    current = fresh; // a racing stale write only sends callers to this slow path
                }
                return fresh;
            }
            b = ring.get(slot);
        }
        // b.epoch > epoch only for a caller whose reading went stale meanwhile: count it a bit later
        return b;
    }

    /**
     * The primaries a whole window would hold at the recent rate: those of the current bucket and
     * the one before it, scaled from the time they span to the window's length. After the rate drops
     * (a backend that turns slow slows a closed-loop client down), the window still counts the old
     * rate for its whole length, and the tokens saved at the old rate would let hedges run above the
     * ratio for many seconds at the new one; the cap follows the recent rate within one to two
     * thirtieths of the window instead. It only ever lowers the cap ({@code min} with the window).
     */
    long recentPrimaries(long now) {
        long epoch = epochOf(now);
        Bucket cur = ring.get((int) (epoch % BUCKETS));
        long primaries = 0;
        long span = 0;
        if (cur.epoch == epoch) {
            primaries += cur.primaries.sum();
            span += Math.max(0, now - cur.start);
        }
        if (epoch > 0) {
            Bucket prev = ring.get((int) ((epoch - 1) % BUCKETS));
            if (prev.epoch == epoch - 1) {
                primaries += prev.primaries.sum();
                span += bucketNanos;
            }
        }
        if (span <= 0) {
            return Long.MAX_VALUE; // nothing to go by: the window decides
        }
        double scaled = (double) primaries * (BUCKETS * (double) bucketNanos) / span;
        return scaled >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) scaled;
    }

    /** Primaries and hedges in the window ending at {@code epoch}. */
    Counts countsAt(long epoch) {
        long primaries = 0;
        long hedges = 0;
        for (int i = 0; i < BUCKETS; i++) {
            Bucket b = ring.get(i);
            if (b.epoch > epoch - BUCKETS) {
                primaries += b.primaries.sum();
                hedges += b.hedges.get();
            }
        }
        return new Counts(primaries, hedges);
    }

    record Counts(long primaries, long hedges) {}

    /** One slice of the window. Immutable identity; counters are thread-safe. */
    static final class Bucket {
        final long epoch;
        /** Ticker reading at which the bucket starts (inclusive) and ends (exclusive), in ns. */
        final long start;

        final long end;
        final LongAdder primaries = new LongAdder();
        final AtomicLong hedges = new AtomicLong();

        Bucket(long epoch, long start, long end) {
            this.epoch = epoch;
            this.start = start;
            this.end = end;
        }
    }
}

package io.github.hedge.core.internal;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;

/**
 * A sliding window of bucket counts ({@link LogLinearBuckets}) made of per-interval slices (packed
 * by {@link SliceCollector}) and a running sum of the slices it holds: closing an interval adds the
 * new slice and subtracts the ones that fall out, so the sum always equals the window exactly and
 * costs O(distinct buckets touched), not O(window).
 *
 * <p><b>Two kinds of sample.</b> Bucket indexes below {@link LogLinearBuckets#BUCKET_COUNT} count
 * observed latencies; indexes {@code BUCKET_COUNT + i} count <em>censored</em> samples, attempts
 * cancelled after a time in bucket {@code i}, whose latency is only known to exceed it. Percentiles
 * are the Kaplan–Meier (product-limit) estimate over the buckets: a censored sample counts in the
 * risk set of every bucket below its own and for half of its own, then leaves without an event, so
 * its mass goes to the observed samples above it. The half is the actuarial (life-table)
 * convention: the sample was cancelled somewhere inside its bucket, on average half-way, so it was
 * at risk for about half of that bucket's events. Counting it for the whole bucket (the convention
 * for exact times, where a sample censored at t is at risk at t) overstates the risk set wherever
 * cancellations are dense, such as just past the hedge delay, and biases every percentile above
 * them upwards: in hedge-benchmarks' sweep the estimate of the unhedged p99 at a 5-10% budget was
 * 1-3% high on average and up to 2.5% higher in a cell than with the half. Without censored samples
 * this is exactly the empirical percentile.
 *
 * <p><b>Extent: time and count.</b> A slice counts for {@code timeSlices} intervals; after that it
 * is kept while the newer slices hold fewer than {@code minSamples} samples, and never beyond {@code
 * maxSlices} intervals. At a high rate the window is a time window; at a low rate it still holds
 * enough samples to estimate a percentile.
 *
 * <p>Memory: the running sum (about 38 KB) exists only while the window holds samples; each slice
 * costs 8 bytes per distinct bucket it touched, and only intervals that recorded something have a
 * slice.
 *
 * <p>Internal: not part of the public API. Not thread-safe: used under the tracker's refresh lock.
 */
public final class SlidingBucketWindow {
    /** Buckets of observed samples; the censored ones follow at {@code B + i}. */
    static final int B = LogLinearBuckets.BUCKET_COUNT;

    private final int timeSlices;
    private final long minSamples;
    private final int maxSlices;
    private final ArrayDeque<Slice> slices = new ArrayDeque<>();
    private long epoch;
    private long[] counts;
    private long events;
    private long censored;
    private int highestIndex = -1; // highest bucket (of either kind, folded to [0, B)) with a count
    private int highestEvent = -1;
    private long version;

    /**
     * How many intervals of {@code interval} cover {@code span}, rounded up (durations too long for
     * nanoseconds count as {@link Long#MAX_VALUE} of them; at most {@link Integer#MAX_VALUE}).
     *
     * @param span the window or age to cover, positive
     * @param interval one slice, positive
     * @return the number of slices
     */
    public static int slicesFor(Duration span, Duration interval) {
        long w = saturatedNanos(span);
        long r = saturatedNanos(interval);
        long slices = w / r + (w % r == 0 ? 0 : 1);
        return (int) Math.min(slices, Integer.MAX_VALUE);
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** @param sliceCount how many intervals the window spans, at least 1; no count extension */
    public SlidingBucketWindow(int sliceCount) {
        this(sliceCount, 0, sliceCount);
    }

    /**
     * @param timeSlices how many intervals a slice counts for, at least 1
     * @param minSamples samples the window keeps while older slices are available, at least 0
     * @param maxSlices how many intervals a slice counts for at most, at least {@code timeSlices}
     */
    public SlidingBucketWindow(int timeSlices, long minSamples, int maxSlices) {
        if (timeSlices < 1) {
            throw new IllegalArgumentException("sliceCount must be >= 1, was " + timeSlices);
        }
        if (maxSlices < timeSlices) {
            throw new IllegalArgumentException("maxSlices must be >= " + timeSlices + ", was " + maxSlices);
        }
        this.timeSlices = timeSlices;
        this.minSamples = Math.max(0, minSamples);
        this.maxSlices = maxSlices;
    }

    /**
     * Closes {@code intervals} intervals: the first {@code intervals - 1} empty (nothing was
     * drained during them), the last holding {@code slice}. Slices that leave the window fall out.
     * With {@code intervals == 0} no interval closes: {@code slice} is added now, dated to the
     * interval in progress (the one the next {@code advance(1, ...)} closes), so samples can be
     * made visible before their interval ends.
     *
     * @param intervals at least 0
     * @param slice a packed slice, or {@code null} when the last interval is empty too
     */
    public void advance(long intervals, long[] slice) {
        if (intervals < 0) {
            throw new IllegalArgumentException("intervals must be >= 0, was " + intervals);
        }
        epoch += intervals;
        if (slice != null) {
            Slice s = new Slice(intervals == 0 ? epoch + 1 : epoch, slice);
            slices.addLast(s);
            apply(s, 1);
        }
        boolean changed = slice != null;
        while (!slices.isEmpty()) {
            Slice oldest = slices.peekFirst();
            long age = epoch - oldest.epoch; // 0 for the newest closed interval, -1 for the one in progress
            boolean expired = age >= maxSlices
                    || (age >= timeSlices && events + censored - oldest.events - oldest.censored >= minSamples);
            if (!expired) {
                break;
            }
            slices.removeFirst();
            apply(oldest, -1);
            changed = true;
        }
        if (changed) {
            version++;
        }
    }

    private void apply(Slice s, long sign) {
        if (counts == null) {
            counts = new long[2 * B];
        }
        for (long entry : s.packed) {
            int index = SliceCollector.index(entry);
            long c = SliceCollector.count(entry) * sign;
            counts[index] += c;
            int folded = index < B ? index : index - B;
            if (sign > 0) {
                if (folded > highestIndex) {
                    highestIndex = folded;
                }
                if (index < B && index > highestEvent) {
                    highestEvent = index;
                }
            }
        }
        events += s.events * sign;
        censored += s.censored * sign;
        if (events + censored == 0) {
            counts = null; // idle windows keep no 38 KB array
            highestIndex = -1;
            highestEvent = -1;
        } else if (sign < 0) {
            while (highestIndex >= 0 && counts[highestIndex] == 0 && counts[B + highestIndex] == 0) {
                highestIndex--;
            }
            while (highestEvent >= 0 && counts[highestEvent] == 0) {
                highestEvent--;
            }
        }
    }

    /** @return the samples in the window, observed and censored */
    public long total() {
        return events + censored;
    }

    /** @return the censored samples in the window */
    public long censored() {
        return censored;
    }

    /** @return a number that changes whenever the window's content does */
    public long version() {
        return version;
    }

    /**
     * @return the largest observed value in the window (its bucket's highest value), in
     *     nanoseconds, or -1 when the window holds no observed sample
     */
    public long max() {
        return highestEvent < 0 ? -1 : LogLinearBuckets.highestValue(highestEvent);
    }

    /**
     * Whether this source still completes: false when the window holds censored samples and the
     * last {@code timeSlices} intervals hold no observed one (a target whose attempts only ever get
     * cancelled, such as a replica that hangs).
     */
    public boolean completesRecently() {
        if (censored == 0) {
            return true;
        }
        for (Iterator<Slice> it = slices.descendingIterator(); it.hasNext(); ) {
            Slice s = it.next();
            if (epoch - s.epoch >= timeSlices) {
                break;
            }
            if (s.events > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Adds this window's censored counts, and its observed ones too when {@code observed}, to {@code
     * acc}: an exclusion for {@link #valuesAt(double[], long[], long[])} (length {@code 2 *}
     * {@link LogLinearBuckets#BUCKET_COUNT}, observed counts first, censored ones after them).
     */
    public void addCountsTo(long[] acc, boolean observed) {
        if (counts == null) {
            return;
        }
        for (int i = 0; i <= highestIndex; i++) {
            acc[B + i] += counts[B + i];
            if (observed) {
                acc[i] += counts[i];
            }
        }
    }

    /** @return the samples, observed and censored, in a packed slice ({@link SliceCollector#takeSlice()}); 0 for null */
    public static long sampleCount(long[] slice) {
        long n = 0;
        if (slice != null) {
            for (long entry : slice) {
                n += SliceCollector.count(entry);
            }
        }
        return n;
    }

    /** {@link #valuesAt(double[], long[], long[])} with nothing excluded. */
    public void valuesAt(double[] sortedPs, long[] out) {
        valuesAt(sortedPs, out, null);
    }

    /**
     * Computes several percentiles in one pass: with no censored sample, the highest value of the
     * bucket holding the {@code ceil(p * total)}-th smallest sample; otherwise the highest value of
     * the first bucket where the Kaplan–Meier estimate of the distribution function reaches p. A
     * percentile the estimate never reaches (the top of the window is censored) is reported as the
     * highest value of the highest bucket holding a sample: a lower bound.
     *
     * @param sortedPs percentiles in (0, 1), ascending
     * @param out receives, at the same positions, the value at each percentile in nanoseconds, or
     *     -1 for all when the window holds no observed sample
     * @param excluded counts per bucket to leave out, observed ones first and censored ones after them
     *     ({@link #addCountsTo}; clamped so no count goes negative), or {@code null}
     */
    public void valuesAt(double[] sortedPs, long[] out, long[] excluded) {
        valuesAt(sortedPs, out, excluded, null);
    }

    /**
     * {@link #valuesAt(double[], long[], long[])}, and how well the data place each percentile.
     *
     * @param relativeErrors {@code null}, or receives at the same positions the relative standard
     *     error of the estimated survival {@code 1 - p} at the percentile's bucket (Greenwood's
     *     formula; without censored samples {@code sqrt((1 - S) / (n S))}, S the empirical survival
     *     there): 0.1 means about 100 uncensored samples' worth beyond it. Where the survival
     *     reaches 0 (every sample still at risk answers in one bucket) that bucket adds {@code 1 /
     *     n}, n the samples at risk (the bucket's own censored samples counting for half).
     *     Infinite where the estimate does not reach the percentile or, without censored samples,
     *     no sample lies beyond it.
     */
    public void valuesAt(double[] sortedPs, long[] out, long[] excluded, double[] relativeErrors) {
        int n = sortedPs.length;
        if (relativeErrors != null) {
            Arrays.fill(relativeErrors, 0, n, Double.POSITIVE_INFINITY);
        }
        int top = highestIndex;
        long observed = events;
        if (excluded != null && events > 0) {
            observed = 0;
            top = -1;
            for (int i = 0; i <= highestIndex; i++) {
                long d = countAt(i, excluded);
                observed += d;
                if (d + censoredAt(i, excluded) > 0) {
                    top = i;
                }
            }
        }
        if (observed == 0) {
            Arrays.fill(out, 0, n, -1L);
            return;
        }
        int j = 0;
        if (censored == 0 && excluded == null) {
            long rank = rank(sortedPs[0], events);
            long cumulative = 0;
            for (int i = 0; i <= highestIndex && j < n; i++) {
                long c = counts[i];
                if (c == 0) {
                    continue;
                }
                cumulative += c;
                while (cumulative >= rank) {
                    if (relativeErrors != null) {
                        relativeErrors[j] = uncensoredRelativeError(cumulative - c, cumulative, events);
                    }
                    out[j++] = LogLinearBuckets.highestValue(i);
                    if (j == n) {
                        return;
                    }
                    rank = rank(sortedPs[j], events);
                }
            }
        } else {
            long atRisk = observed;
            for (int i = 0; i <= top; i++) {
                atRisk += censoredAt(i, excluded);
            }
            double survival = 1.0;
            double greenwood = 0; // sum of d / (atRisk (atRisk - d)): relative variance of survival
            for (int i = 0; i <= top && j < n; i++) {
                long d = countAt(i, excluded);
                long c = censoredAt(i, excluded);
                if (d > 0) {
                    // the bucket's own censored samples count for half of it (see the class comment)
                    double risk = atRisk - 0.5 * c;
                    survival *= 1.0 - d / risk;
                    // where every sample still at risk answers in this bucket (survival reaches 0), its
                    // term is 1 / risk: an atom of many samples places its percentiles well, one last
                    // sample does not
                    greenwood += d < risk ? d / (risk * (risk - d)) : 1.0 / risk;
                    double cdf = 1.0 - survival;
                    while (j < n && cdf >= sortedPs[j] - 1e-12) {
                        if (relativeErrors != null) {
                            relativeErrors[j] = Math.sqrt(greenwood);
                        }
                        out[j++] = LogLinearBuckets.highestValue(i);
                    }
                }
                atRisk -= d + c;
            }
        }
        long highest = LogLinearBuckets.highestValue(Math.max(top, 0));
        while (j < n) {
            out[j++] = highest;
        }
    }

    /**
     * Greenwood's relative standard error without censoring, at a bucket holding samples {@code
     * (below, upTo]} of {@code n}: {@code sqrt((1 - S) / (n S))}, S the survival after the bucket;
     * for the top bucket (S = 0), the value before it plus {@code 1 / n_at_risk}, as in the
     * censored case.
     */
    private static double uncensoredRelativeError(long below, long upTo, long n) {
        if (upTo < n) {
            double survival = (double) (n - upTo) / n;
            return Math.sqrt((1 - survival) / (n * survival));
        }
        double before = (double) (n - below) / n;
        return Math.sqrt((2 - before) / (n * before));
    }

    private long countAt(int i, long[] excluded) {
        long c = counts[i];
        if (excluded != null && c > 0) {
            c = Math.max(0, c - excluded[i]);
        }
        return c;
    }

    private long censoredAt(int i, long[] excluded) {
        long c = counts[B + i];
        if (excluded != null && c > 0) {
            c = Math.max(0, c - excluded[B + i]);
        }
        return c;
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

    /** One interval's counts, with its totals of each kind. Immutable. */
    private static final class Slice {
        final long epoch;
        final long[] packed;
        final long events;
        final long censored;

        Slice(long epoch, long[] packed) {
            this.epoch = epoch;
            this.packed = packed;
            long e = 0;
            long c = 0;
            for (long entry : packed) {
                if (SliceCollector.index(entry) < B) {
                    e += SliceCollector.count(entry);
                } else {
                    c += SliceCollector.count(entry);
                }
            }
            this.events = e;
            this.censored = c;
        }
    }
}

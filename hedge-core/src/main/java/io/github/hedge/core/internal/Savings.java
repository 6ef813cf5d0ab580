package io.github.hedge.core.internal;

import io.github.hedge.core.HedgeSavings;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.LatencySummary;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The data behind {@link HedgeSavings}: primaries' latency (answered, or censored when cancelled)
 * and successful calls' end-to-end latency, each in a sliding window of its own.
 *
 * <p><b>One increment per call.</b> A primary that wins its call is one sample of both
 * distributions (it starts when the call starts), so it is recorded once, in a counter whose drain
 * feeds both windows. Only calls a hedge touched record more: a call won by a hedge (the call's
 * latency) and its cancelled primary (censored), or a primary left running that answered after its
 * call ended. Recording is lock-free and O(1).
 *
 * <p>Reading refreshes both windows under a lock at most once per refresh interval, as {@link
 * io.github.hedge.core.LatencyTracker} does. Internal; thread-safe.
 */
public final class Savings {
    private static final long MIN_SAMPLES = 10_000;
    private static final int B = LogLinearBuckets.BUCKET_COUNT;
    private static final double[] PS = {0.5, 0.9, 0.95, 0.99, 0.999};
    /** Standard errors either side of a percentile's survival for its confidence interval. */
    static final double Z = 2;
    /** How far (relative) the interval may reach from the estimate for it to count as supported. */
    static final double MAX_SPREAD = 0.1;

    private final Ticker ticker;
    private final long refreshNanos;
    /** [0, B): a primary won its call (both distributions); [B, 2B): another attempt won (calls only). */
    private final StripedBucketCounter wins;
    /** [0, B): a primary answered after its call ended; [B, 2B): a primary cancelled (censored). */
    private final StripedBucketCounter primariesOnly;

    // guarded by lock
    private final ReentrantLock lock = new ReentrantLock();
    private final SliceCollector collector = new SliceCollector();
    private final SlidingBucketWindow primaries;
    private final SlidingBucketWindow calls;
    private long lastRefreshNanos;
    private long primariesVersion = -1;
    private long callsVersion = -1;
    private LatencySummary primariesSummary = LatencySummary.EMPTY;
    private LatencySummary callsSummary = LatencySummary.EMPTY;
    private List<Double> supported = List.of();

    /**
     * @param ticker the executor's time source
     * @param window how long a sample counts (at least; low rates keep up to 10,000 samples for up
     *     to an hour, or the window if longer)
     */
    public Savings(Ticker ticker, Duration window) {
        Duration refresh = Duration.ofSeconds(1);
        if (window.compareTo(Duration.ofSeconds(600)) > 0) {
            refresh = window.dividedBy(600).plusNanos(1);
        }
        if (refresh.compareTo(window) > 0) {
            refresh = window;
        }
        Duration maxAge = window.compareTo(Duration.ofHours(1)) > 0 ? window : Duration.ofHours(1);
        if (maxAge.toNanos() / refresh.toNanos() > 100_000) {
            maxAge = refresh.multipliedBy(100_000);
        }
        this.ticker = ticker;
        this.refreshNanos = refresh.toNanos();
        int slices = SlidingBucketWindow.slicesFor(window, refresh);
        int maxSlices = Math.max(slices, SlidingBucketWindow.slicesFor(maxAge, refresh));
        this.primaries = new SlidingBucketWindow(slices, MIN_SAMPLES, maxSlices);
        this.calls = new SlidingBucketWindow(slices, MIN_SAMPLES, maxSlices);
        int cpus = Runtime.getRuntime().availableProcessors();
        this.wins = new StripedBucketCounter(StripedBucketCounter.stripesFor(2 * cpus, 4, 16));
        this.primariesOnly = new StripedBucketCounter(StripedBucketCounter.stripesFor(cpus, 2, 4));
        this.lastRefreshNanos = ticker.nanoTime();
    }

    /** A call's primary (started with the call) won it, {@code nanos} after the call started. */
    public void primaryWon(long nanos) {
        wins.increment(StripedBucketCounter.probe(), LogLinearBuckets.indexOf(nanos));
    }

    /** A call was won by an attempt other than its primary, {@code nanos} after the call started. */
    public void hedgeWon(long nanos) {
        wins.increment(StripedBucketCounter.probe(), B + LogLinearBuckets.indexOf(nanos));
    }

    /** A primary answered (successfully) after {@code nanos}, but not as its call's winner. */
    public void primaryAnswered(long nanos) {
        primariesOnly.increment(StripedBucketCounter.probe(), LogLinearBuckets.indexOf(nanos));
    }

    /** A primary was cancelled after running {@code nanos}. */
    public void primaryCancelled(long nanos) {
        primariesOnly.increment(StripedBucketCounter.probe(), B + LogLinearBuckets.indexOf(nanos));
    }

    /**
     * @param stats the executor's counters, for the extra load
     * @return the savings over the current window
     */
    public HedgeSavings snapshot(HedgeStats stats) {
        double extra = stats.calls() == 0 ? 0 : (double) stats.hedgesSent() / stats.calls();
        lock.lock();
        try {
            refreshIfDue();
            if (primaries.version() != primariesVersion) {
                long[] values = new long[PS.length];
                double[] errors = new double[PS.length];
                primaries.valuesAt(PS, values, null, errors);
                supported = supported(primaries, values, errors);
                primariesSummary = supportedOnly(summary(primaries, values), supported);
                primariesVersion = primaries.version();
            }
            if (calls.version() != callsVersion) {
                long[] values = new long[PS.length];
                calls.valuesAt(PS, values);
                callsSummary = summary(calls, values);
                callsVersion = calls.version();
            }
            return new HedgeSavings(callsSummary, primariesSummary, primaries.censored(), extra, supported);
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock. */
    private void refreshIfDue() {
        long now = ticker.nanoTime();
        long elapsed = now - lastRefreshNanos;
        if (elapsed < refreshNanos) {
            return;
        }
        long intervals = elapsed / refreshNanos;
        lastRefreshNanos += intervals * refreshNanos;
        wins.drainTo(collector);
        long[] won = collector.takeSlice();
        if (won != null) {
            for (long entry : won) {
                int index = SliceCollector.index(entry);
                collector.add(index < B ? index : index - B, SliceCollector.count(entry));
            }
        }
        calls.advance(intervals, collector.takeSlice());
        if (won != null) {
            for (long entry : won) {
                int index = SliceCollector.index(entry);
                if (index < B) {
                    collector.add(index, SliceCollector.count(entry));
                }
            }
        }
        primariesOnly.drainTo(collector);
        primaries.advance(intervals, collector.takeSlice());
    }

    /**
     * The percentiles of {@link #PS} whose estimate is supported, ascending, given the window's
     * values and relative errors at {@link #PS}. A percentile p is supported when the Kaplan–Meier estimate reaches it and its approximate 95%
     * confidence interval, the values where the estimated survival is {@code (1 - p) (1 ± Z r)}
     * (r the relative standard error there, {@link SlidingBucketWindow#valuesAt(double[], long[],
     * long[], double[])}), lies within {@link #MAX_SPREAD} of the estimate. Both a thin tail (r
     * large: the interval reaches past the data) and a flat stretch of the distribution (a gap
     * between two modes, where a small error in the survival moves the percentile far) fail it.
     */
    static List<Double> supported(SlidingBucketWindow w, long[] values, double[] errors) {
        if (w.total() == 0) {
            return List.of();
        }
        int n = PS.length;
        double[] bounds = new double[2 * n];
        boolean[] bounded = new boolean[n];
        for (int j = 0; j < n; j++) {
            double spread = Z * errors[j] * (1 - PS[j]); // infinite where the estimate is unreached
            // below 1 - p: both bounds lie in (0, 1), since every p of PS is at least 0.5
            bounded[j] = PS[j] + spread < 1;
            bounds[2 * j] = bounded[j] ? PS[j] - spread : PS[j];
            bounds[2 * j + 1] = bounded[j] ? PS[j] + spread : PS[j];
        }
        double[] sorted = bounds.clone();
        Arrays.sort(sorted);
        long[] sortedValues = new long[2 * n];
        double[] sortedErrors = new double[2 * n];
        w.valuesAt(sorted, sortedValues, null, sortedErrors);
        List<Double> supported = new ArrayList<>(n);
        for (int j = 0; j < n; j++) {
            if (!bounded[j]) {
                continue;
            }
            int lo = Arrays.binarySearch(sorted, bounds[2 * j]);
            int hi = Arrays.binarySearch(sorted, bounds[2 * j + 1]);
            if (Double.isFinite(sortedErrors[hi]) // else the upper bound lies beyond the data
                    && sortedValues[hi] <= (1 + MAX_SPREAD) * values[j]
                    && sortedValues[lo] >= (1 - MAX_SPREAD) * values[j]) {
                supported.add(PS[j]);
            }
        }
        return List.copyOf(supported);
    }

    /** @param values the window's values at {@link #PS} */
    private static LatencySummary summary(SlidingBucketWindow w, long[] values) {
        long count = w.total();
        if (count == 0) {
            return LatencySummary.EMPTY;
        }
        if (values[0] < 0) {
            return LatencySummary.EMPTY;
        }
        return new LatencySummary(count, values[0], values[1], values[2], values[3], values[4], w.max());
    }

    /** @return {@code s} with -1 at each percentile not in {@code supported}: no estimate is guessed */
    static LatencySummary supportedOnly(LatencySummary s, List<Double> supported) {
        if (s.count() == 0) {
            return s;
        }
        return new LatencySummary(
                s.count(),
                supported.contains(PS[0]) ? s.p50Nanos() : -1,
                supported.contains(PS[1]) ? s.p90Nanos() : -1,
                supported.contains(PS[2]) ? s.p95Nanos() : -1,
                supported.contains(PS[3]) ? s.p99Nanos() : -1,
                supported.contains(PS[4]) ? s.p999Nanos() : -1,
                s.maxNanos());
    }
}

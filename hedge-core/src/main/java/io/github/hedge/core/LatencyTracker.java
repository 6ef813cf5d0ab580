package io.github.hedge.core;

import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.internal.LogLinearBuckets;
import io.github.hedge.core.internal.SliceCollector;
import io.github.hedge.core.internal.SlidingBucketWindow;
import io.github.hedge.core.internal.StripedBucketCounter;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Recent per-attempt latency, cluster-wide and per target (a replica, host or endpoint such as
 * {@code "10.0.0.1:9042"}), over a sliding time window. Adaptive delay policies ({@link
 * PercentileDelay}) read their percentiles here; adapters feed it the latency of every attempt.
 *
 * <p><b>Units.</b> Every latency, recorded or reported, is in nanoseconds. Values are kept in
 * log-linear buckets with about 1.6 % relative precision (exact below 128 ns): without censored
 * samples a reported percentile is the highest value of the bucket holding the requested sample,
 * so it is never below the true value and at most 1.6 % above it. A percentile the censored data
 * cannot reach (every sample above some point was cancelled) is reported as the highest value of
 * the highest bucket holding a sample, a lower bound. Negative samples count as 0 and samples above one hour
 * as one hour.
 *
 * <p><b>No ratchet: censored samples.</b> Feed it each attempt's own latency, never the hedged
 * end-to-end latency of a call (hedging cuts the tail of end-to-end latency, so a percentile over it
 * lowers the delay, which cuts the tail again). An attempt that was cancelled (a hedging loser, or
 * one ended by a deadline or its caller) has no latency, only a lower bound: record its elapsed time
 * with {@link #recordCensored(String, long)}. Percentiles are the Kaplan–Meier (product-limit)
 * estimate over the buckets: a censored sample takes part in the risk set up to its elapsed time
 * (for half of the bucket holding it, the actuarial convention, as it was cancelled somewhere
 * inside it) and then passes its weight to the observed samples above it, instead of counting as a
 * latency equal to its elapsed time. Recording losers as full samples at their elapsed time (delay + the winner's
 * latency) feeds the estimate with the values it produced, and with a replica that hangs the
 * percentile climbs until hedging stops (Scylla #3746, #7342). Without censored samples the estimate
 * is the plain empirical percentile.
 *
 * <p><b>Targets that stop completing.</b> A target that has censored samples and has completed no
 * attempt for a whole {@link #window()} (a replica that hangs: every attempt on it is cancelled or
 * never ends) has no percentile of its own
 * (-1; {@link PercentileDelay} then falls back to the pooled one), and its censored samples are left
 * out of the cluster-wide estimate, so that one dead replica among healthy ones cannot lift the
 * cluster-wide percentile either. Its observed samples, if any, still count.
 *
 * <p><b>Window: time and count.</b> Samples are kept for {@link #window()} (default 30 s) in slices
 * of {@link #refreshInterval()} (default 1 s); at low rates a window (cluster-wide, and each
 * target's) keeps older samples while its newer ones are fewer than {@link #minWindowSamples()}
 * (default 1000), up to {@link #maxWindowAge()} (default 10 min), so a percentile at 1 call/s rests
 * on as many samples as at 1000 calls/s. There is no background thread: a reader that finds the
 * cached values older than the refresh interval refreshes them (only one reader at a time; the
 * others go on reading the previous values), closing one slice per elapsed interval and dropping
 * slices that left the window. A sample therefore becomes visible at the first refresh after it is
 * recorded; samples recorded while nobody reads are all dated to the refresh that finally sees them.
 * Time comes from the injected {@link Ticker}, so tests run in virtual time.
 *
 * <p><b>Warm-up.</b> While the cluster-wide window holds fewer than {@link #minWindowSamples()}
 * samples (a new tracker, or one whose window emptied), a reader also makes new samples visible
 * every sixteenth of the refresh interval (62.5 ms by default), without closing an interval: the
 * samples are dated to the interval in progress, as they would be at its end. An adaptive delay
 * therefore gets its first estimate after about {@code minSamples} calls rather than after a whole
 * interval (at 1,000 calls/s: about 100 calls instead of 1,000 unhedged ones). Until the window
 * holds 160 samples, a reader makes each new sample visible at once, so the warm-up bound of an
 * adaptive delay moves with every one of the first answers (at most 160 extra refreshes). A tracker
 * with {@code minWindowSamples} 0 never warms up this way.
 *
 * <p><b>Cost.</b> {@link #record(long)} is one bucket-index computation, one {@code
 * getAndIncrement} on a counter striped by thread (no lock, no allocation, no clock read, no
 * per-thread state, so virtual threads are fine) and scales with the number of recording threads;
 * {@link #record(String, long)} adds a hash-map lookup and a second increment. Readers ({@link
 * #percentileNanos(double)}, {@link #medianTargetPercentileNanos}, {@link #sampleCount()}, {@link
 * #summary()}...) read the clock and an immutable cached snapshot; the first request for a new
 * percentile (or a new median key) computes it under the lock and keeps it up to date afterwards
 * (up to 64 of each; beyond, uncached requests are computed under the lock every time).
 *
 * <p><b>Targets.</b> At most {@link #maxTargets()} targets are tracked (default 1024); samples for
 * further targets are recorded cluster-wide only. A target whose window has emptied (no samples for
 * {@link #maxWindowAge()}, or for {@link #window()} when {@link #minWindowSamples()} is 0) is
 * forgotten at a refresh (a sample racing with that may be lost for the target, never cluster-wide).
 * A tracked target costs 38 KB of counters per stripe (2 stripes, 4 on more than 2 processors) plus,
 * while it has samples, 38 KB of window sums and 8 bytes per distinct bucket per interval; the
 * cluster-wide counters use 4 to 16 stripes (twice the processors).
 *
 * <p>Fully thread-safe: any number of threads may record and read concurrently.
 */
public final class LatencyTracker {
    /** Percentiles every snapshot holds, for {@link LatencySummary}. */
    private static final double[] SUMMARY_PS = {0.5, 0.9, 0.95, 0.99, 0.999};

    private static final long DEFAULT_MIN_WINDOW_SAMPLES = 1000;
    /** The longest {@link Builder#sizedFor} keeps samples at low rates. */
    private static final Duration SIZED_MAX_WINDOW_AGE = Duration.ofHours(1);

    private static final int MAX_EXTRA_PERCENTILES = 64;
    private static final int MAX_MEDIAN_KEYS = 64;
    private static final int MAX_SLICES = 600;
    private static final int MAX_AGE_SLICES = 100_000;
    /** Refreshes per interval while warming up. */
    private static final int WARMUP_REFRESHES = 16;
    /**
     * While warming, samples are made visible at the next read until the window holds this many:
     * the warm-up bound of {@link PercentileDelay} rests on the first answers (a median from one,
     * p80 and p90 of a target from 25 and 50), and a client calling every millisecond would
     * otherwise send 60 calls before its first answer showed. At most this many extra refreshes.
     */
    private static final int EAGER_SAMPLES = 160;
    /**
     * How far (as a factor) a target's percentile may lie from the median target's and still count
     * in {@link #consensusTargetPercentileNanos}: wide enough for the sampling error of alike targets
     * (about 5% at 300 samples beyond the percentile, more while warming up), narrow enough that a
     * target slow enough to matter is left out.
     */
    private static final double CONSENSUS_FACTOR = 1.25;

    private final Duration window;
    private final Duration refreshInterval;
    private final long refreshNanos;
    private final int sliceCount;
    private final long minWindowSamples;
    private final Duration maxWindowAge;
    private final int maxAgeSlices;
    private final Ticker ticker;
    private final int maxTargets;
    private final int targetStripes;

    private final StripedBucketCounter clusterCounter;
    private final ConcurrentHashMap<String, TargetState> targets = new ConcurrentHashMap<>();
    /** When the first answer without a tracked target ended ({@link #recordAnswer}); unset: MAX_VALUE. */
    private final AtomicLong clusterFirstAnswer = new AtomicLong(Long.MAX_VALUE);

    private final AtomicInteger targetCount = new AtomicInteger();

    // guarded by lock
    private final ReentrantLock lock = new ReentrantLock();
    private final SlidingBucketWindow clusterWindow;
    private final SliceCollector collector = new SliceCollector();
    /** Censored counts of the targets that stopped completing, left out of the cluster estimate; or null. */
    private long[] excludedCensored;

    private double[] registeredPs = SUMMARY_PS.clone();
    private double[] medianPs = new double[0];
    private long[] medianMins = new long[0];
    private long registryVersion;
    private long clusterExclusionVersion;

    private volatile long lastRefreshNanos;
    /** The last refresh of either kind (see {@link #warming}). */
    private volatile long lastPeekNanos;
    /** Whether the cluster window holds fewer than {@link #minWindowSamples}: refresh more often. */
    private volatile boolean warming;
    /**
     * Whether the cluster window holds fewer than {@link #EAGER_SAMPLES} while warming: a reader
     * then makes every new sample visible at once.
     */
    private volatile boolean eager;

    private final long warmupRefreshNanos;
    private volatile Snapshot snapshot;

    private LatencyTracker(Builder b) {
        this.window = b.window;
        this.refreshInterval = b.refreshInterval;
        this.refreshNanos = saturatedNanos(b.refreshInterval);
        this.sliceCount = SlidingBucketWindow.slicesFor(b.window, b.refreshInterval);
        this.minWindowSamples = b.minWindowSamples;
        this.maxWindowAge = b.maxWindowAge;
        this.maxAgeSlices = Math.max(sliceCount, SlidingBucketWindow.slicesFor(b.maxWindowAge, b.refreshInterval));
        this.ticker = b.ticker;
        this.maxTargets = b.maxTargets;
        int cpus = Runtime.getRuntime().availableProcessors();
        this.clusterCounter = new StripedBucketCounter(StripedBucketCounter.stripesFor(2 * cpus, 4, 16));
        this.targetStripes = StripedBucketCounter.stripesFor(cpus, 2, 4);
        this.clusterWindow = newWindow();
        this.lastRefreshNanos = ticker.nanoTime();
        this.lastPeekNanos = lastRefreshNanos;
        this.warmupRefreshNanos = Math.max(1, refreshNanos / WARMUP_REFRESHES);
        this.warming = minWindowSamples > 0;
        this.eager = this.warming;
        lock.lock();
        try {
            this.snapshot = buildSnapshot(null);
        } finally {
            lock.unlock();
        }
    }

    /** @return a builder with the defaults: 30 s window, 1 s refresh, system ticker, 1024 targets */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a tracker with the defaults of {@link #builder()} */
    public static LatencyTracker ofDefaults() {
        return builder().build();
    }

    // ------------------------------------------------------------------ recording (hot path)

    /**
     * Records one attempt's latency cluster-wide only. Lock-free and allocation-free: one striped
     * {@code getAndIncrement}. Becomes visible at the next refresh.
     *
     * @param latencyNanos the attempt's own latency in nanoseconds (never a hedged call's
     *     end-to-end latency); negative counts as 0, above one hour as one hour
     */
    public void record(long latencyNanos) {
        clusterCounter.increment(StripedBucketCounter.probe(), LogLinearBuckets.indexOf(latencyNanos));
    }

    /**
     * Records one attempt's latency cluster-wide and, when {@code target} is non-null, for that
     * target. Lock-free; costs a hash-map lookup and a second striped increment over {@link
     * #record(long)}, plus a one-time registration for a new target (only while fewer than {@link
     * #maxTargets()} are tracked; otherwise the sample is recorded cluster-wide only).
     *
     * @param target where the attempt ran, e.g. {@code "10.0.0.1:9042"}; {@code null} for unknown
     * @param latencyNanos the attempt's own latency in nanoseconds (never a hedged call's
     *     end-to-end latency); negative counts as 0, above one hour as one hour
     */
    public void record(String target, long latencyNanos) {
        long probe = StripedBucketCounter.probe();
        int bucket = LogLinearBuckets.indexOf(latencyNanos);
        clusterCounter.increment(probe, bucket);
        if (target != null) {
            TargetState t = targets.get(target);
            if (t == null) {
                t = addTarget(target);
            }
            if (t != null) {
                t.counter.increment(probe, bucket);
            }
        }
    }

    /**
     * Records one successful attempt, unless it started before its target had ever answered: such
     * an attempt measured the target's connection (TCP, TLS, HTTP/2 or the driver's handshake) and
     * the client's cold code, not the target. A new client's first calls pile up while it
     * connects and all answer late together; counted as samples, they would hold an adaptive delay
     * far above the target's latency until enough later samples outvote them (a new gRPC channel
     * at 200 calls/s: 40 calls of 100 to 140 ms against a 2 ms median). The first answer of each
     * target (or, for attempts without a target, the first answer of all) is therefore left out,
     * and so is every answer to an attempt that started before it; a target forgotten after an
     * idle window starts over. Lock-free; as {@link #record(String, long)} otherwise.
     *
     * @param target where the attempt ran; {@code null} for unknown
     * @param startNanos when the attempt started, on this tracker's {@link Builder#ticker ticker}
     * @param endNanos when it answered, on the same ticker
     */
    public void recordAnswer(String target, long startNanos, long endNanos) {
        TargetState t = null;
        if (target != null) {
            t = targets.get(target);
            if (t == null) {
                t = addTarget(target);
            }
        }
        AtomicLong first = t != null ? t.firstAnswer : clusterFirstAnswer;
        long f = first.get();
        if (f == Long.MAX_VALUE) {
            if (first.compareAndSet(Long.MAX_VALUE, endNanos)) {
                return; // the first answer itself
            }
            f = first.get();
        }
        if (startNanos - f < 0) {
            return; // started before its target's first answer: it measured the connection
        }
        record(target, endNanos - startNanos);
    }

    /**
     * Records one censored sample cluster-wide: an attempt cancelled (a hedging loser, or ended by
     * a deadline or its caller) after {@code elapsedNanos}, whose own latency is therefore only
     * known to exceed that. Lock-free and allocation-free, like {@link #record(long)}.
     *
     * @param elapsedNanos how long the attempt had run when it was cancelled, in nanoseconds
     */
    public void recordCensored(long elapsedNanos) {
        clusterCounter.increment(
                StripedBucketCounter.probe(), LogLinearBuckets.BUCKET_COUNT + LogLinearBuckets.indexOf(elapsedNanos));
    }

    /**
     * Records one censored sample cluster-wide and for {@code target}: see {@link
     * #recordCensored(long)} and {@link #record(String, long)}.
     *
     * @param target where the attempt ran; {@code null} for unknown
     * @param elapsedNanos how long the attempt had run when it was cancelled, in nanoseconds
     */
    public void recordCensored(String target, long elapsedNanos) {
        long probe = StripedBucketCounter.probe();
        int bucket = LogLinearBuckets.BUCKET_COUNT + LogLinearBuckets.indexOf(elapsedNanos);
        clusterCounter.increment(probe, bucket);
        if (target != null) {
            TargetState t = targets.get(target);
            if (t == null) {
                t = addTarget(target);
            }
            if (t != null) {
                t.counter.increment(probe, bucket);
            }
        }
    }

    private SlidingBucketWindow newWindow() {
        return new SlidingBucketWindow(sliceCount, minWindowSamples, maxAgeSlices);
    }

    private TargetState addTarget(String target) {
        if (targetCount.get() >= maxTargets) {
            return null;
        }
        return targets.computeIfAbsent(target, key -> {
            while (true) {
                int n = targetCount.get();
                if (n >= maxTargets) {
                    return null;
                }
                if (targetCount.compareAndSet(n, n + 1)) {
                    return new TargetState(new StripedBucketCounter(targetStripes), newWindow());
                }
            }
        });
    }

    // ------------------------------------------------------------------ reading (cached)

    /**
     * The p-th percentile of the cluster-wide window. Cached: the first request for a given {@code
     * p} computes it, later ones read the value kept up to date at every refresh.
     *
     * @param p the percentile, in (0, 1): 0.99 for p99
     * @return the latency in nanoseconds, or -1 when the window is empty
     * @throws IllegalArgumentException when p is not in (0, 1)
     */
    public long percentileNanos(double p) {
        checkPercentile(p);
        Snapshot s = current();
        int i = indexOf(s.ps, p);
        if (i >= 0) {
            return s.cluster.values[i];
        }
        return slowPercentile(p, null);
    }

    /**
     * The p-th percentile of one target's window. Cached like {@link #percentileNanos(double)}.
     *
     * @param p the percentile, in (0, 1)
     * @param target the target, as given to {@link #record(String, long)}
     * @return the latency in nanoseconds, or -1 when that target's window is empty or the target is
     *     unknown (never recorded, beyond {@link #maxTargets()}, or forgotten after a window idle)
     * @throws IllegalArgumentException when p is not in (0, 1)
     */
    public long percentileNanos(double p, String target) {
        checkPercentile(p);
        Snapshot s = current();
        View v = target == null ? null : s.targets.get(target);
        if (v == null) {
            return -1;
        }
        int i = indexOf(s.ps, p);
        if (i >= 0) {
            return v.values[i];
        }
        return slowPercentile(p, target);
    }

    /**
     * The lower median, over the targets holding at least {@code minSamples} samples in their
     * window, of each target's own p-th percentile: with three targets of which one is slow, the
     * healthy ones decide, so a minority of slow replicas cannot lift the hedge delay. With {@code
     * n} qualifying targets sorted by their percentile, the one at index {@code (n - 1) / 2}.
     * Cached per {@code (p, minSamples)} and kept up to date at every refresh.
     *
     * @param p the percentile, in (0, 1)
     * @param minSamples samples a target's window needs to take part, at least 0 (a target with an
     *     empty window never takes part)
     * @return the latency in nanoseconds, or -1 when no target qualifies
     * @throws IllegalArgumentException when p is not in (0, 1) or minSamples is negative
     */
    public long medianTargetPercentileNanos(double p, long minSamples) {
        return targetValue(p, minSamples, false);
    }

    /**
     * The targets' consensus on their p-th percentile: over the targets holding at least {@code
     * minSamples} samples, the mean of their own percentiles weighted by their samples, counting
     * only the targets whose percentile lies within a factor 1.25 of the
     * {@linkplain #medianTargetPercentileNanos lower median}. Like the median, a minority of slow
     * (or fast) targets cannot move it; unlike the median, it rests on the samples of every target
     * that agrees, so with three alike targets its sampling error is that of their pooled samples
     * rather than of one target's (the median of three estimates has about 1.35 times the variance
     * of their mean). A target up to 1.25 times slower than the median one still counts, and lifts
     * the value by at most its share of the samples times 25% (one of three alike targets: about 8%).
     * Cached per {@code (p, minSamples)} with the median and kept up to date at every refresh.
     *
     * @param p the percentile, in (0, 1)
     * @param minSamples samples a target's window needs to take part, at least 0 (a target with an
     *     empty window never takes part)
     * @return the latency in nanoseconds, or -1 when no target qualifies
     * @throws IllegalArgumentException when p is not in (0, 1) or minSamples is negative
     */
    public long consensusTargetPercentileNanos(double p, long minSamples) {
        return targetValue(p, minSamples, true);
    }

    /** The cached median or consensus for {@code (p, minSamples)}; computed on a first request. */
    private long targetValue(double p, long minSamples, boolean consensus) {
        checkPercentile(p);
        Checks.atLeast("minSamples", minSamples, 0);
        Snapshot s = current();
        for (int i = 0; i < s.medianPs.length; i++) {
            if (s.medianPs[i] == p && s.medianMins[i] == minSamples) {
                return consensus ? s.consensusValues[i] : s.medianValues[i];
            }
        }
        return slowTargetValue(p, minSamples, consensus);
    }

    /** @return the samples in the cluster-wide window (cached), observed and censored */
    public long sampleCount() {
        return current().cluster.count;
    }

    /** @return the censored samples in the cluster-wide window (cached) */
    public long censoredCount() {
        return current().cluster.censored;
    }

    /**
     * @param target the target, as given to {@link #record(String, long)}
     * @return the samples in that target's window (cached); 0 when the target is unknown
     */
    public long sampleCount(String target) {
        View v = target == null ? null : current().targets.get(target);
        return v == null ? 0 : v.count;
    }

    /** @return count, p50, p90, p95, p99, p99.9 and max of the cluster-wide window (cached), in ns */
    public LatencySummary summary() {
        return current().cluster.summary;
    }

    /**
     * @param target the target, as given to {@link #record(String, long)}
     * @return that target's summary (cached), in ns; {@link LatencySummary#EMPTY} when the target is
     *     unknown or its window is empty
     */
    public LatencySummary summary(String target) {
        View v = target == null ? null : current().targets.get(target);
        return v == null ? LatencySummary.EMPTY : v.summary;
    }

    /**
     * @return an immutable map from every tracked target to its summary (cached, rebuilt at each
     *     refresh), in ns; a target whose samples are not yet visible maps to {@link
     *     LatencySummary#EMPTY}
     */
    public Map<String, LatencySummary> targetSummaries() {
        return current().summaries;
    }

    /** @return how long samples count, as configured */
    public Duration window() {
        return window;
    }

    /** @return how often cached values are refreshed (at most), as configured */
    public Duration refreshInterval() {
        return refreshInterval;
    }

    /** @return samples a window keeps at low rates, as configured */
    public long minWindowSamples() {
        return minWindowSamples;
    }

    /** @return the longest a sample counts, as configured */
    public Duration maxWindowAge() {
        return maxWindowAge;
    }

    /** @return how many targets are tracked at most, as configured */
    public int maxTargets() {
        return maxTargets;
    }

    @Override
    public String toString() {
        return "LatencyTracker[window=" + window + ", refreshInterval=" + refreshInterval + ", maxTargets=" + maxTargets
                + ", samples=" + snapshot.cluster.count + ", targets=" + snapshot.targets.size() + "]";
    }

    // ------------------------------------------------------------------ refresh

    private Snapshot current() {
        long now = ticker.nanoTime();
        if (refreshDue(now) && lock.tryLock()) {
            try {
                refreshIfDue(now);
            } finally {
                lock.unlock();
            }
        }
        return snapshot;
    }

    /** An interval has ended, or, while warming up, a sixteenth of one since the last refresh. */
    private boolean refreshDue(long now) {
        return now - lastRefreshNanos >= refreshNanos
                || (warming && now - lastPeekNanos >= warmupRefreshNanos)
                || (eager && clusterCounter.maybeDirty());
    }

    /** Under the lock. */
    private void refreshIfDue(long now) {
        if (!refreshDue(now)) {
            return;
        }
        long last = lastRefreshNanos;
        long intervals = (now - last) / refreshNanos; // 0 for a warm-up refresh: no interval closes
        lastPeekNanos = now;
        clusterCounter.drainTo(collector);
        clusterWindow.advance(intervals, collector.takeSlice());
        for (Iterator<Map.Entry<String, TargetState>> it = targets.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, TargetState> e = it.next();
            TargetState t = e.getValue();
            boolean drained = t.counter.drainTo(collector);
            t.window.advance(intervals, collector.takeSlice());
            if (!drained && t.window.total() == 0 && t.seen && !t.counter.maybeDirty()) {
                if (targets.remove(e.getKey(), t)) {
                    targetCount.decrementAndGet();
                }
            }
            t.seen = true;
        }
        long[] excluded = null;
        for (TargetState t : targets.values()) {
            t.stale = !t.window.completesRecently();
            if (t.stale) {
                if (excluded == null) {
                    excluded = new long[LogLinearBuckets.BUCKET_COUNT];
                }
                t.window.addCensoredTo(excluded);
            }
        }
        if (excluded != null || excludedCensored != null) {
            clusterExclusionVersion++;
        }
        excludedCensored = excluded;
        lastRefreshNanos = last + intervals * refreshNanos;
        warming = minWindowSamples > 0 && clusterWindow.total() < minWindowSamples;
        eager = warming && clusterWindow.total() < EAGER_SAMPLES;
        snapshot = buildSnapshot(snapshot);
    }

    private long slowPercentile(double p, String target) {
        lock.lock();
        try {
            refreshIfDue(ticker.nanoTime());
            int i = indexOf(registeredPs, p);
            if (i < 0 && registeredPs.length < SUMMARY_PS.length + MAX_EXTRA_PERCENTILES) {
                double[] ps = Arrays.copyOf(registeredPs, registeredPs.length + 1);
                ps[ps.length - 1] = p;
                Arrays.sort(ps);
                registeredPs = ps;
                registryVersion++;
                snapshot = buildSnapshot(snapshot);
                i = indexOf(registeredPs, p);
            }
            if (target == null) {
                if (i >= 0) {
                    return snapshot.cluster.values[i];
                }
                long[] out = new long[1];
                clusterWindow.valuesAt(new double[] {p}, out, excludedCensored);
                return out[0];
            }
            TargetState t = targets.get(target);
            if (t == null) {
                return -1;
            }
            if (i >= 0) {
                View v = snapshot.targets.get(target);
                return v == null ? -1 : v.values[i];
            }
            return t.stale ? -1 : t.window.valueAt(p);
        } finally {
            lock.unlock();
        }
    }

    private long slowTargetValue(double p, long minSamples, boolean consensus) {
        lock.lock();
        try {
            refreshIfDue(ticker.nanoTime());
            for (int i = 0; i < medianPs.length; i++) {
                if (medianPs[i] == p && medianMins[i] == minSamples) {
                    return consensus ? snapshot.consensusValues[i] : snapshot.medianValues[i];
                }
            }
            if (medianPs.length < MAX_MEDIAN_KEYS) {
                if (indexOf(registeredPs, p) < 0) {
                    slowPercentile(p, null); // registers p (reentrant lock)
                }
                if (indexOf(registeredPs, p) >= 0) {
                    int n = medianPs.length;
                    medianPs = Arrays.copyOf(medianPs, n + 1);
                    medianMins = Arrays.copyOf(medianMins, n + 1);
                    medianPs[n] = p;
                    medianMins[n] = minSamples;
                    snapshot = buildSnapshot(snapshot);
                    return consensus ? snapshot.consensusValues[n] : snapshot.medianValues[n];
                }
            }
            // too many distinct keys to cache: compute from the windows, under the lock
            long[] values = new long[targets.size()];
            long[] counts = new long[values.length];
            int n = 0;
            for (TargetState t : targets.values()) {
                long count = t.window.total();
                if (n < values.length && !t.stale && count > 0 && count >= minSamples) {
                    long v = t.window.valueAt(p);
                    if (v >= 0) {
                        values[n] = v;
                        counts[n++] = count;
                    }
                }
            }
            long median = lowerMedian(values.clone(), n);
            return consensus ? consensus(values, counts, n, median) : median;
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: a snapshot of the current windows, reusing the views that did not change. */
    private Snapshot buildSnapshot(Snapshot previous) {
        boolean sameRegistry = previous != null && previous.registryVersion == registryVersion;
        boolean sameCluster = sameRegistry && previous.clusterExclusionVersion == clusterExclusionVersion;
        View cluster = view(clusterWindow, sameCluster ? previous.cluster : null, excludedCensored, false);
        Map<String, View> views = new HashMap<>(Math.max(16, targets.size() * 2));
        Map<String, LatencySummary> summaries = new HashMap<>(Math.max(16, targets.size() * 2));
        for (Map.Entry<String, TargetState> e : targets.entrySet()) {
            View old = sameRegistry ? previous.targets.get(e.getKey()) : null;
            TargetState t = e.getValue();
            if (old != null && old.stale != t.stale) {
                old = null;
            }
            View v = view(t.window, old, null, t.stale);
            views.put(e.getKey(), v);
            summaries.put(e.getKey(), v.summary);
        }
        long[] medianValues = new long[medianPs.length];
        long[] consensusValues = new long[medianPs.length];
        long[] values = new long[views.size()];
        long[] counts = new long[views.size()];
        long[] scratch = new long[views.size()];
        for (int k = 0; k < medianPs.length; k++) {
            int pi = indexOf(registeredPs, medianPs[k]);
            int n = 0;
            for (View v : views.values()) {
                if (v.count > 0 && v.count >= medianMins[k] && v.values[pi] >= 0) {
                    values[n] = v.values[pi];
                    counts[n++] = v.count;
                }
            }
            System.arraycopy(values, 0, scratch, 0, n);
            medianValues[k] = lowerMedian(scratch, n);
            consensusValues[k] = consensus(values, counts, n, medianValues[k]);
        }
        return new Snapshot(
                registeredPs,
                registryVersion,
                clusterExclusionVersion,
                cluster,
                views,
                Map.copyOf(summaries),
                medianPs.clone(),
                medianMins.clone(),
                medianValues,
                consensusValues);
    }

    private View view(SlidingBucketWindow w, View old, long[] excluded, boolean stale) {
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

    private static long lowerMedian(long[] values, int n) {
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
    private static long consensus(long[] values, long[] counts, int n, long median) {
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

    private static int indexOf(double[] ps, double p) {
        for (int i = 0; i < ps.length; i++) {
            if (ps[i] == p) {
                return i;
            }
        }
        return -1;
    }

    private static void checkPercentile(double p) {
        if (!(p > 0 && p < 1)) {
            Checks.openRange("percentile", p, 0, 1);
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    // ------------------------------------------------------------------ state

    /** A tracked target: its hot-path counter and (under the lock) its window. */
    private static final class TargetState {
        final StripedBucketCounter counter;
        final SlidingBucketWindow window;
        /** When this target's first answer ended ({@link #recordAnswer}); unset: MAX_VALUE. */
        final AtomicLong firstAnswer = new AtomicLong(Long.MAX_VALUE);

        boolean seen; // under the lock: a refresh has already seen it (not evicted before)
        boolean stale; // under the lock: its recent samples are all censored (it stopped completing)

        TargetState(StripedBucketCounter counter, SlidingBucketWindow window) {
            this.counter = counter;
            this.window = window;
        }
    }

    /** Cached values of one window, aligned with the snapshot's registered percentiles. Immutable. */
    private static final class View {
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

    /** Everything readers see, published through one volatile write. Immutable. */
    private static final class Snapshot {
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

        Snapshot(
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
    }

    // ------------------------------------------------------------------ builder

    /**
     * Configures a {@link LatencyTracker}. Each setter validates its value at once; {@link #build()}
     * checks the settings against each other and copies them, so a builder can be reused. Not
     * thread-safe.
     */
    public static final class Builder {
        private Duration window = Duration.ofSeconds(30);
        private Duration refreshInterval = Duration.ofSeconds(1);
        private Ticker ticker = Ticker.system();
        private int maxTargets = 1024;
        private long minWindowSamples = DEFAULT_MIN_WINDOW_SAMPLES;
        private Duration maxWindowAge = Duration.ofMinutes(10);

        private Builder() {}

        /**
         * @param minSamples samples a window keeps at low rates, >= 0 (default 1000): a sample older
         *     than {@link #window(Duration)} still counts while the newer samples of its window
         *     (cluster-wide, or of its target) are fewer, up to {@link #maxWindowAge(Duration)}; 0
         *     makes the window a plain time window
         * @return this builder
         */
        public Builder minWindowSamples(long minSamples) {
            this.minWindowSamples = Checks.atLeast("minWindowSamples", minSamples, 0);
            return this;
        }

        /**
         * @param maxAge the longest a sample counts, even at low rates, {@code >= window} (default
         *     10 min); at most 100,000 refresh intervals
         * @return this builder
         */
        public Builder maxWindowAge(Duration maxAge) {
            this.maxWindowAge = Checks.positive("maxWindowAge", maxAge);
            return this;
        }

        /**
         * Sizes the window at low rates for a delay policy, as {@link HedgedExecutor} sizes its own
         * tracker: {@link #minWindowSamples(long)} becomes the policy's {@link
         * DelayPolicy#windowSamples()} (at least 1000: 6,000 for a p95 delay, 30,000 for a p99, the
         * larger of the two for {@link DelayPolicy#min}/{@link DelayPolicy#max}), and {@link
         * #maxWindowAge(Duration)} 1 h, or the window set so far if that is longer (call it after
         * {@link #window(Duration)}). With the 10 minutes of a plain builder, 10 calls/s gave each of
         * three replicas 2,000 samples for its p99, and hedge-benchmarks' sweep had hedged p99.9 at up
         * to 1.16x the oracle's (docs/benchmarks.md 2.6). The price: at low rates the percentile
         * follows a lasting change of latency more slowly. At 10 calls/s, after every replica became
         * 2x slower, the p99 took 41 min to come within 10% (8.5 min with 2,000 samples), and p99.99
         * was 1.2x higher meanwhile; the budget kept extra load at its ratio (docs/benchmarks.md 3).
         *
         * @param policy the delay policy that reads this tracker
         * @return this builder
         */
        public Builder sizedFor(DelayPolicy policy) {
            Checks.notNull("policy", policy);
            this.minWindowSamples = Math.max(DEFAULT_MIN_WINDOW_SAMPLES, policy.windowSamples());
            this.maxWindowAge = SIZED_MAX_WINDOW_AGE.compareTo(window) >= 0 ? SIZED_MAX_WINDOW_AGE : window;
            return this;
        }

        /**
         * @param window how long a sample counts, > 0 (default 30 s); at most 600 refresh intervals
         * @return this builder
         */
        public Builder window(Duration window) {
            this.window = Checks.positive("window", window);
            return this;
        }

        /**
         * @param interval how often cached values are refreshed, and the granularity of the window,
         *     {@code > 0} and {@code <= window} (default 1 s); the window is split into {@code ceil(window /
         *     interval)} slices, at most 600
         * @return this builder
         */
        public Builder refreshInterval(Duration interval) {
            this.refreshInterval = Checks.positive("refreshInterval", interval);
            return this;
        }

        /**
         * @param ticker the time source (default {@link Ticker#system()}); a virtual-time ticker in
         *     tests
         * @return this builder
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Checks.notNull("ticker", ticker);
            return this;
        }

        /**
         * @param maxTargets how many targets are tracked at most, >= 1 (default 1024); samples for
         *     further targets count cluster-wide only
         * @return this builder
         */
        public Builder maxTargets(int maxTargets) {
            this.maxTargets = (int) Checks.atLeast("maxTargets", maxTargets, 1);
            return this;
        }

        /**
         * @return a new tracker with these settings
         * @throws IllegalArgumentException when refreshInterval is longer than window, or the window
         *     would need more than 600 slices
         */
        public LatencyTracker build() {
            Checks.ordered("refreshInterval", refreshInterval, "window", window);
            Checks.ordered("window", window, "maxWindowAge", maxWindowAge);
            int ageSlices = SlidingBucketWindow.slicesFor(maxWindowAge, refreshInterval);
            if (ageSlices > MAX_AGE_SLICES) {
                throw new IllegalArgumentException("maxWindowAge / refreshInterval must be <= " + MAX_AGE_SLICES
                        + " intervals, was " + ageSlices + " (maxWindowAge " + maxWindowAge + ", refreshInterval "
                        + refreshInterval + ")");
            }
            int slices = SlidingBucketWindow.slicesFor(window, refreshInterval);
            if (slices > MAX_SLICES) {
                throw new IllegalArgumentException("window / refreshInterval must be <= " + MAX_SLICES
                        + " slices, was " + slices + " (window " + window + ", refreshInterval " + refreshInterval
                        + ")");
            }
            return new LatencyTracker(this);
        }
    }
}

package io.github.hedge.core;

import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.internal.SlidingBucketWindow;
import io.github.hedge.core.internal.TrackerEstimates;
import io.github.hedge.core.internal.TrackerSnapshot;
import io.github.hedge.core.internal.TrackerWindows;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.Map;

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
 * <p><b>Targets the traffic left.</b> A target that, at its share of the cluster-wide window, would
 * have got 20 samples since its last one (placement moved off it: the gRPC balancer holds a
 * stalling replica off, a driver's plan skips a slow node) has all its samples left out of the
 * cluster-wide percentiles (those of {@link #summary()} too; its count and maximum still include
 * them) until it gets one again: the pooled percentile describes the
 * calls being made, and {@link PercentileDelay}'s budget floors read it as their demand. Its own
 * percentile and sample count are unchanged. With its share unchanged a gap that long has a chance
 * of {@code e^-20}, so a target that gets few calls keeps counting (one call in 500 every fifth
 * second does: {@code LatencyTrackerTest}).
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
    private static final long DEFAULT_MIN_WINDOW_SAMPLES = 1000;
    /** The longest {@link Builder#sizedFor} keeps samples at low rates. */
    private static final Duration SIZED_MAX_WINDOW_AGE = Duration.ofHours(1);

    private static final int MAX_SLICES = 600;
    private static final int MAX_AGE_SLICES = 100_000;

    private final Duration window;
    private final Duration refreshInterval;
    private final long minWindowSamples;
    private final Duration maxWindowAge;
    private final int maxTargets;
    /** The counters and windows: recording, refresh, which targets stopped completing. */
    private final TrackerWindows windows;
    /** The percentiles, medians and summaries over them, cached in snapshots. */
    private final TrackerEstimates estimates;
    /**
     * The latest decision of a {@link PercentileDelay} reading this tracker, with the snapshot it was
     * computed from (one slot: policies sharing a tracker take turns).
     */
    volatile PercentileDelay.Parts delayParts;

    private LatencyTracker(Builder b) {
        this.window = b.window;
        this.refreshInterval = b.refreshInterval;
        this.minWindowSamples = b.minWindowSamples;
        this.maxWindowAge = b.maxWindowAge;
        this.maxTargets = b.maxTargets;
        int sliceCount = SlidingBucketWindow.slicesFor(b.window, b.refreshInterval);
        this.windows = new TrackerWindows(
                saturatedNanos(b.refreshInterval),
                sliceCount,
                b.minWindowSamples,
                Math.max(sliceCount, SlidingBucketWindow.slicesFor(b.maxWindowAge, b.refreshInterval)),
                b.maxTargets,
                b.ticker);
        this.estimates = new TrackerEstimates(b.ticker, windows);
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
        windows.record(latencyNanos);
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
        windows.record(target, latencyNanos);
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
        windows.recordAnswer(target, startNanos, endNanos);
    }

    /**
     * Records one censored sample cluster-wide: an attempt cancelled (a hedging loser, or ended by
     * a deadline or its caller) after {@code elapsedNanos}, whose own latency is therefore only
     * known to exceed that. Lock-free and allocation-free, like {@link #record(long)}.
     *
     * @param elapsedNanos how long the attempt had run when it was cancelled, in nanoseconds
     */
    public void recordCensored(long elapsedNanos) {
        windows.recordCensored(elapsedNanos);
    }

    /**
     * Records one censored sample cluster-wide and for {@code target}: see {@link
     * #recordCensored(long)} and {@link #record(String, long)}.
     *
     * @param target where the attempt ran; {@code null} for unknown
     * @param elapsedNanos how long the attempt had run when it was cancelled, in nanoseconds
     */
    public void recordCensored(String target, long elapsedNanos) {
        windows.recordCensored(target, elapsedNanos);
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
        return estimates.percentileNanos(p);
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
        return estimates.percentileNanos(p, target);
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
        return estimates.targetValue(p, minSamples, consensus);
    }

    /**
     * The current snapshot, refreshed first when a refresh is due: every cached reader reads it, so
     * a value derived from the readers stays valid while the snapshot is the same object and {@link
     * #firstAnswers()} is unchanged. For {@link PercentileDelay}'s cached decision.
     */
    TrackerSnapshot snapshot() {
        return estimates.current();
    }

    /** @return a count that changes when a target's first answer is recorded ({@link #medianOrFirstAnswerNanos()}) */
    int firstAnswers() {
        return windows.firstAnswers();
    }

    /** @return the samples in the cluster-wide window (cached), observed and censored */
    public long sampleCount() {
        return estimates.current().sampleCount();
    }

    /**
     * The lower median, over the targets that answered, of each target's median, a target with no
     * sample yet counting its first answer's latency ({@link #recordAnswer}): an upper bound of the
     * lower median of the targets' medians, known from each target's first answer on. For {@link
     * WarmUpDelay}.
     *
     * @return ns; -1 when no target answered
     */
    long medianOrFirstAnswerNanos() {
        return estimates.medianOrFirstAnswerNanos();
    }

    /** @return the censored samples in the cluster-wide window (cached) */
    public long censoredCount() {
        return estimates.current().censoredCount();
    }

    /**
     * @param target the target, as given to {@link #record(String, long)}
     * @return the samples in that target's window (cached); 0 when the target is unknown
     */
    public long sampleCount(String target) {
        return estimates.current().sampleCount(target);
    }

    /** @return count, p50, p90, p95, p99, p99.9 and max of the cluster-wide window (cached), in ns */
    public LatencySummary summary() {
        return estimates.current().summary();
    }

    /**
     * @param target the target, as given to {@link #record(String, long)}
     * @return that target's summary (cached), in ns; {@link LatencySummary#EMPTY} when the target is
     *     unknown or its window is empty
     */
    public LatencySummary summary(String target) {
        return estimates.current().summary(target);
    }

    /**
     * @return an immutable map from every tracked target to its summary (cached, rebuilt at each
     *     refresh), in ns; a target whose samples are not yet visible maps to {@link
     *     LatencySummary#EMPTY}
     */
    public Map<String, LatencySummary> targetSummaries() {
        return estimates.current().summaries();
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
        TrackerSnapshot s = estimates.lastSnapshot();
        return "LatencyTracker[window=" + window + ", refreshInterval=" + refreshInterval + ", maxTargets=" + maxTargets
                + ", samples=" + s.sampleCount() + ", targets=" + s.targetCount() + "]";
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
         * to 1.16x the oracle's (current figures: {@code docs/benchmarks.md#other-request-rates}). The price: at low rates the percentile
         * follows a lasting change of latency more slowly. At 10 calls/s, after every replica became
         * 2x slower, the p99 took 41 min to come within 10% (8.5 min with 2,000 samples), and p99.99
         * was 1.2x higher meanwhile; the budget kept extra load at its ratio (raw output: {@code
         * hedge-benchmarks/results/shift-all-replicas-rate10.jsonl}).
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

package io.github.hedge.core.internal;

import io.github.hedge.core.spi.Ticker;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The storage of a {@code LatencyTracker}: the striped counters that recording threads increment
 * (the hot path, lock-free) and the sliding windows that a refresh moves them into, cluster-wide
 * and per target. It decides when a refresh is due (an interval ended, or, while warming up, a
 * sixteenth of one), which targets stopped completing and which the traffic left; the estimates over the windows are
 * {@link TrackerEstimates}'.
 *
 * <p>Internal: not part of the public API. Recording is thread-safe and lock-free; {@link
 * #refreshIfDue} and the windows are used under the estimates' lock.
 */
public final class TrackerWindows {
    /**
     * While warming, samples are made visible at the next read until the window holds this many:
     * the warm-up bound of {@code PercentileDelay} rests on the first answers (a median from one,
     * p80 and p90 of a target from 25 and 50), and a client calling every millisecond would
     * otherwise send 60 calls before its first answer showed. At most this many extra refreshes.
     */
    private static final int EAGER_SAMPLES = 160;
    /** Refreshes per interval while warming up. */
    private static final int WARMUP_REFRESHES = 16;
    /**
     * Samples a target would have got, at its share of the cluster-wide window, since its last one,
     * before it counts as left by the traffic (its samples then leave the cluster-wide estimate until
     * it gets one again): with its share unchanged,
     * the chance of a gap that long is {@code e^-20}.
     */
    static final double IDLE_EXPECTED = 20;

    private final long refreshNanos;
    private final int sliceCount;
    private final long minWindowSamples;
    private final int maxAgeSlices;
    private final int maxTargets;
    private final int targetStripes;

    private final StripedBucketCounter clusterCounter;
    final ConcurrentHashMap<String, TargetState> targets = new ConcurrentHashMap<>();
    /** Targets whose first answer is known: a reader of the first answers sees new ones by it. */
    private final AtomicInteger firstAnswers = new AtomicInteger();
    /** When the first answer without a tracked target ended ({@link #recordAnswer}); unset: MAX_VALUE. */
    private final AtomicLong clusterFirstAnswer = new AtomicLong(Long.MAX_VALUE);

    private final AtomicInteger targetCount = new AtomicInteger();

    // guarded by the estimates' lock
    final SlidingBucketWindow clusterWindow;
    private final SliceCollector collector = new SliceCollector();
    /**
     * Counts left out of the cluster-wide estimate ({@link SlidingBucketWindow#addCountsTo}): the
     * censored ones of the targets that stopped completing, and all of those the traffic left; or null.
     */
    long[] excluded;
    /** Samples drained into the cluster-wide window since the start: the clock of {@link TargetState#lastSampleAt}. */
    private long drainedSamples;

    long clusterExclusionVersion;

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

    /**
     * @param refreshNanos the refresh interval, in ns
     * @param sliceCount slices of the time window
     * @param minWindowSamples samples a window keeps at low rates
     * @param maxAgeSlices the most slices a window keeps at low rates
     * @param maxTargets how many targets are tracked at most
     * @param ticker read once, to date the first interval
     */
    public TrackerWindows(
            long refreshNanos, int sliceCount, long minWindowSamples, int maxAgeSlices, int maxTargets, Ticker ticker) {
        this.refreshNanos = refreshNanos;
        this.sliceCount = sliceCount;
        this.minWindowSamples = minWindowSamples;
        this.maxAgeSlices = maxAgeSlices;
        this.maxTargets = maxTargets;
        int cpus = Runtime.getRuntime().availableProcessors();
        this.clusterCounter = new StripedBucketCounter(StripedBucketCounter.stripesFor(2 * cpus, 4, 16));
        this.targetStripes = StripedBucketCounter.stripesFor(cpus, 2, 4);
        this.clusterWindow = newWindow();
        this.lastRefreshNanos = ticker.nanoTime();
        this.lastPeekNanos = lastRefreshNanos;
        this.warmupRefreshNanos = Math.max(1, refreshNanos / WARMUP_REFRESHES);
        this.warming = minWindowSamples > 0;
        this.eager = this.warming;
    }

    // ------------------------------------------------------------------ recording (hot path)

    /** One observed latency, cluster-wide only. */
    public void record(long latencyNanos) {
        clusterCounter.increment(StripedBucketCounter.probe(), LogLinearBuckets.indexOf(latencyNanos));
    }

    /**
     * @return how many targets' first answers have been recorded (targets forgotten since included):
     *     changes whenever {@link TrackerEstimates#medianOrFirstAnswerNanos()} may change without a
     *     new snapshot
     */
    public int firstAnswers() {
        return firstAnswers.get();
    }

    /** One observed latency, cluster-wide and for {@code target} (when non-null and tracked). */
    public void record(String target, long latencyNanos) {
        count(target, LogLinearBuckets.indexOf(latencyNanos));
    }

    /** One answer, left out when it started before its target's (or the cluster's) first answer. */
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
                if (t != null) {
                    t.firstAnswerNanos.set(Math.max(0, endNanos - startNanos));
                    firstAnswers.incrementAndGet();
                }
                return; // the first answer itself
            }
            f = first.get();
        }
        if (startNanos - f < 0) {
            return; // started before its target's first answer: it measured the connection
        }
        record(target, endNanos - startNanos);
    }

    /** One censored sample, cluster-wide only. */
    public void recordCensored(long elapsedNanos) {
        clusterCounter.increment(
                StripedBucketCounter.probe(), LogLinearBuckets.BUCKET_COUNT + LogLinearBuckets.indexOf(elapsedNanos));
    }

    /** One censored sample, cluster-wide and for {@code target}. */
    public void recordCensored(String target, long elapsedNanos) {
        count(target, LogLinearBuckets.BUCKET_COUNT + LogLinearBuckets.indexOf(elapsedNanos));
    }

    /** Counts one sample in {@code bucket} (observed, or censored past BUCKET_COUNT), cluster-wide and for {@code target}. */
    private void count(String target, int bucket) {
        long probe = StripedBucketCounter.probe();
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

    // ------------------------------------------------------------------ refresh

    /** An interval has ended, or, while warming up, a sixteenth of one since the last refresh. */
    boolean refreshDue(long now) {
        return now - lastRefreshNanos >= refreshNanos
                || (warming && now - lastPeekNanos >= warmupRefreshNanos)
                || (eager && clusterCounter.maybeDirty());
    }

    /**
     * Under the estimates' lock: moves the counters into the windows, closing one slice per elapsed
     * interval, forgets targets whose window emptied, and marks the targets that stopped completing
     * and those the traffic left.
     *
     * @return whether it refreshed (the estimates must then be rebuilt)
     */
    boolean refreshIfDue(long now) {
        if (!refreshDue(now)) {
            return false;
        }
        long last = lastRefreshNanos;
        long intervals = (now - last) / refreshNanos; // 0 for a warm-up refresh: no interval closes
        lastPeekNanos = now;
        clusterCounter.drainTo(collector);
        long[] clusterSlice = collector.takeSlice();
        drainedSamples += SlidingBucketWindow.sampleCount(clusterSlice);
        clusterWindow.advance(intervals, clusterSlice);
        for (Iterator<Map.Entry<String, TargetState>> it = targets.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, TargetState> e = it.next();
            TargetState t = e.getValue();
            boolean drained = t.counter.drainTo(collector);
            long[] slice = collector.takeSlice();
            if (slice != null) {
                t.lastSampleAt = drainedSamples;
            }
            t.window.advance(intervals, slice);
            if (!drained && t.window.total() == 0 && t.seen && !t.counter.maybeDirty()) {
                if (targets.remove(e.getKey(), t)) {
                    targetCount.decrementAndGet();
                }
            }
            t.seen = true;
        }
        long[] left = null;
        long clusterTotal = clusterWindow.total();
        for (TargetState t : targets.values()) {
            t.stale = !t.window.completesRecently();
            long own = t.window.total();
            // the traffic since its last sample would have brought it IDLE_EXPECTED of them at its
            // share of the window: placement moved off it (a stalling replica held off by the
            // balancer), so its samples no longer describe the calls being made
            boolean idle = !t.stale
                    && own > 0
                    && (double) (drainedSamples - t.lastSampleAt) * own >= IDLE_EXPECTED * clusterTotal;
            if (t.stale || idle) {
                if (left == null) {
                    left = new long[2 * LogLinearBuckets.BUCKET_COUNT];
                }
                t.window.addCountsTo(left, idle);
            }
        }
        if (left != null || excluded != null) {
            clusterExclusionVersion++;
        }
        excluded = left;
        lastRefreshNanos = last + intervals * refreshNanos;
        warming = minWindowSamples > 0 && clusterWindow.total() < minWindowSamples;
        eager = warming && clusterWindow.total() < EAGER_SAMPLES;
        return true;
    }

    /** A tracked target: its hot-path counter and (under the lock) its window. */
    static final class TargetState {
        final StripedBucketCounter counter;
        final SlidingBucketWindow window;
        /** When this target's first answer ended ({@link #recordAnswer}); unset: MAX_VALUE. */
        final AtomicLong firstAnswer = new AtomicLong(Long.MAX_VALUE);
        /**
         * How long that first answer took, in ns; unset: -1. Not a sample (it measured the
         * connection too), but an upper bound of the target's latency then.
         */
        final AtomicLong firstAnswerNanos = new AtomicLong(-1);

        boolean seen; // under the lock: a refresh has already seen it (not evicted before)
        boolean stale; // under the lock: its recent samples are all censored (it stopped completing)
        /** Under the lock: {@link #drainedSamples} when a refresh last drained a sample of this target. */
        long lastSampleAt;

        TargetState(StripedBucketCounter counter, SlidingBucketWindow window) {
            this.counter = counter;
            this.window = window;
        }
    }
}

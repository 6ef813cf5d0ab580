package io.github.hedge.core.internal;

import io.github.hedge.core.LatencySummary;
import io.github.hedge.core.internal.TrackerWindows.TargetState;
import io.github.hedge.core.spi.Ticker;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The estimators of a {@code LatencyTracker} over its {@link TrackerWindows}: percentiles of the
 * cluster-wide and per-target windows, and the median and consensus of the targets' percentiles.
 * Readers read an immutable {@link TrackerSnapshot}; a reader that finds a refresh due refreshes
 * the windows and rebuilds the snapshot under the lock (one reader at a time, the others read the
 * previous snapshot). The first request for a new percentile (or a new median key) registers it
 * under the lock, and every later snapshot keeps it up to date (up to 64 of each).
 *
 * <p>Internal: not part of the public API. Thread-safe.
 */
public final class TrackerEstimates {
    private static final int MAX_EXTRA_PERCENTILES = 64;
    private static final int MAX_MEDIAN_KEYS = 64;

    private final Ticker ticker;
    private final TrackerWindows windows;

    // guarded by lock
    private final ReentrantLock lock = new ReentrantLock();
    private double[] registeredPs = TrackerSnapshot.SUMMARY_PS.clone();
    private double[] medianPs = new double[0];
    private long[] medianMins = new long[0];
    private long registryVersion;

    private volatile TrackerSnapshot snapshot;

    /**
     * @param ticker the tracker's time source
     * @param windows the storage to estimate over
     */
    public TrackerEstimates(Ticker ticker, TrackerWindows windows) {
        this.ticker = ticker;
        this.windows = windows;
        lock.lock();
        try {
            this.snapshot = buildSnapshot(null);
        } finally {
            lock.unlock();
        }
    }

    /** @return the snapshot as last built, without a refresh (for {@code toString}) */
    public TrackerSnapshot lastSnapshot() {
        return snapshot;
    }

    /** @return the current snapshot, refreshed first when a refresh is due and no other reader runs one */
    public TrackerSnapshot current() {
        long now = ticker.nanoTime();
        if (windows.refreshDue(now) && lock.tryLock()) {
            try {
                refreshIfDue(now);
            } finally {
                lock.unlock();
            }
        }
        return snapshot;
    }

    /** Under the lock. */
    private void refreshIfDue(long now) {
        if (windows.refreshIfDue(now)) {
            snapshot = buildSnapshot(snapshot);
        }
    }

    /** The p-th percentile (p already checked) of the cluster-wide window; -1 when it is empty. */
    public long percentileNanos(double p) {
        TrackerSnapshot s = current();
        int i = TrackerSnapshot.indexOf(s.ps, p);
        if (i >= 0) {
            return s.cluster.values[i];
        }
        return slowPercentile(p, null);
    }

    /** The p-th percentile (p already checked) of {@code target}'s window; -1 when empty or unknown. */
    public long percentileNanos(double p, String target) {
        TrackerSnapshot s = current();
        TrackerSnapshot.View v = target == null ? null : s.targets.get(target);
        if (v == null) {
            return -1;
        }
        int i = TrackerSnapshot.indexOf(s.ps, p);
        if (i >= 0) {
            return v.values[i];
        }
        return slowPercentile(p, target);
    }

    /**
     * The lower median, over the targets that answered, of each target's median, where a target
     * with no sample yet counts its first answer's latency: an upper bound of its latency then (it
     * measured the connection too). Lock-free; allocates a small array.
     *
     * @return ns; -1 when no target answered
     */
    public long medianOrFirstAnswerNanos() {
        TrackerSnapshot s = current();
        int median = TrackerSnapshot.indexOf(s.ps, 0.5);
        long[] values = new long[windows.targets.size() + 1];
        int n = 0;
        for (Map.Entry<String, TargetState> e : windows.targets.entrySet()) {
            TrackerSnapshot.View v = s.targets.get(e.getKey());
            if (v != null && v.stale) {
                continue; // it stopped answering: an old answer bounds nothing now
            }
            long m = v != null && v.count > 0 && median >= 0 ? v.values[median] : -1;
            if (m < 0) {
                m = e.getValue().firstAnswerNanos.get();
            }
            if (m >= 0 && n < values.length) {
                values[n++] = m;
            }
        }
        if (n == 0) {
            return -1;
        }
        Arrays.sort(values, 0, n);
        return values[(n - 1) / 2];
    }

    /** The cached median or consensus for {@code (p, minSamples)} (both checked); computed on a first request. */
    public long targetValue(double p, long minSamples, boolean consensus) {
        TrackerSnapshot s = current();
        for (int i = 0; i < s.medianPs.length; i++) {
            if (s.medianPs[i] == p && s.medianMins[i] == minSamples) {
                return consensus ? s.consensusValues[i] : s.medianValues[i];
            }
        }
        return slowTargetValue(p, minSamples, consensus);
    }

    private long slowPercentile(double p, String target) {
        lock.lock();
        try {
            refreshIfDue(ticker.nanoTime());
            int i = TrackerSnapshot.indexOf(registeredPs, p);
            if (i < 0 && registeredPs.length < TrackerSnapshot.SUMMARY_PS.length + MAX_EXTRA_PERCENTILES) {
                double[] ps = Arrays.copyOf(registeredPs, registeredPs.length + 1);
                ps[ps.length - 1] = p;
                Arrays.sort(ps);
                registeredPs = ps;
                registryVersion++;
                snapshot = buildSnapshot(snapshot);
                i = TrackerSnapshot.indexOf(registeredPs, p);
            }
            if (target == null) {
                if (i >= 0) {
                    return snapshot.cluster.values[i];
                }
                long[] out = new long[1];
                windows.clusterWindow.valuesAt(new double[] {p}, out, windows.excluded);
                return out[0];
            }
            TargetState t = windows.targets.get(target);
            if (t == null) {
                return -1;
            }
            if (i >= 0) {
                TrackerSnapshot.View v = snapshot.targets.get(target);
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
                if (TrackerSnapshot.indexOf(registeredPs, p) < 0) {
                    slowPercentile(p, null); // registers p (reentrant lock)
                }
                if (TrackerSnapshot.indexOf(registeredPs, p) >= 0) {
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
            long[] values = new long[windows.targets.size()];
            long[] counts = new long[values.length];
            int n = 0;
            for (TargetState t : windows.targets.values()) {
                long count = t.window.total();
                if (n < values.length && !t.stale && count > 0 && count >= minSamples) {
                    long v = t.window.valueAt(p);
                    if (v >= 0) {
                        values[n] = v;
                        counts[n++] = count;
                    }
                }
            }
            long median = TrackerSnapshot.lowerMedian(values.clone(), n);
            return consensus ? TrackerSnapshot.consensus(values, counts, n, median) : median;
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: a snapshot of the current windows, reusing the views that did not change. */
    private TrackerSnapshot buildSnapshot(TrackerSnapshot previous) {
        boolean sameRegistry = previous != null && previous.registryVersion == registryVersion;
        boolean sameCluster = sameRegistry && previous.clusterExclusionVersion == windows.clusterExclusionVersion;
        TrackerSnapshot.View cluster = TrackerSnapshot.view(
                registeredPs, windows.clusterWindow, sameCluster ? previous.cluster : null, windows.excluded, false);
        Map<String, TrackerSnapshot.View> views = new HashMap<>(Math.max(16, windows.targets.size() * 2));
        Map<String, LatencySummary> summaries = new HashMap<>(Math.max(16, windows.targets.size() * 2));
        for (Map.Entry<String, TargetState> e : windows.targets.entrySet()) {
            TrackerSnapshot.View old = sameRegistry ? previous.targets.get(e.getKey()) : null;
            TargetState t = e.getValue();
            if (old != null && old.stale != t.stale) {
                old = null;
            }
            TrackerSnapshot.View v = TrackerSnapshot.view(registeredPs, t.window, old, null, t.stale);
            views.put(e.getKey(), v);
            summaries.put(e.getKey(), v.summary);
        }
        long[] medianValues = new long[medianPs.length];
        long[] consensusValues = new long[medianPs.length];
        long[] values = new long[views.size()];
        long[] counts = new long[views.size()];
        long[] scratch = new long[views.size()];
        for (int k = 0; k < medianPs.length; k++) {
            int pi = TrackerSnapshot.indexOf(registeredPs, medianPs[k]);
            int n = 0;
            for (TrackerSnapshot.View v : views.values()) {
                if (v.count > 0 && v.count >= medianMins[k] && v.values[pi] >= 0) {
                    values[n] = v.values[pi];
                    counts[n++] = v.count;
                }
            }
            System.arraycopy(values, 0, scratch, 0, n);
            medianValues[k] = TrackerSnapshot.lowerMedian(scratch, n);
            consensusValues[k] = TrackerSnapshot.consensus(values, counts, n, medianValues[k]);
        }
        return new TrackerSnapshot(
                registeredPs,
                registryVersion,
                windows.clusterExclusionVersion,
                cluster,
                views,
                Map.copyOf(summaries),
                medianPs.clone(),
                medianMins.clone(),
                medianValues,
                consensusValues);
    }
}

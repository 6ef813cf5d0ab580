package io.github.hedge.cassandra.internal;

import io.github.hedge.core.spi.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-node latency scores for latency-aware ordering (the idea of the 3.x driver's {@code
 * LatencyAwarePolicy}): a time-decayed average per node; a node whose average is above {@code
 * threshold} times the best node's goes to the back of the plan until {@code retryPeriod} passes
 * without a new measurement, then it is tried again (probed).
 *
 * <p>Thread-safe: each score is updated under its own lock; reads are racy but consistent per node.
 *
 * @param <K> the node key
 */
public final class LatencyScores<K> {
    private final double threshold;
    private final long scaleNanos;
    private final long retryPeriodNanos;
    private final int minMeasurements;
    private final Ticker ticker;
    private final Map<K, Score> scores = new ConcurrentHashMap<>();

    /**
     * @param threshold exclusion threshold (> 1)
     * @param scaleNanos decay time constant of the average
     * @param retryPeriodNanos how long an excluded node stays excluded without new measurements
     * @param minMeasurements measurements a node needs before it can be excluded or be the best
     * @param ticker time source
     */
    public LatencyScores(double threshold, long scaleNanos, long retryPeriodNanos, int minMeasurements, Ticker ticker) {
        this.threshold = threshold;
        this.scaleNanos = scaleNanos;
        this.retryPeriodNanos = retryPeriodNanos;
        this.minMeasurements = minMeasurements;
        this.ticker = ticker;
    }

    /**
     * Records one measurement.
     *
     * @param key the node
     * @param latencyNanos its latency (or a lower bound of it, for a censored sample)
     */
    public void record(K key, long latencyNanos) {
        scores.computeIfAbsent(key, k -> new Score()).update(ticker.nanoTime(), Math.max(0, latencyNanos));
    }

    /** Forgets a node (it was removed from the cluster). */
    public void forget(K key) {
        scores.remove(key);
    }

    /**
     * @param key a node
     * @return whether the node is excluded now (goes to the back of the plan)
     */
    public boolean isExcluded(K key) {
        long now = ticker.nanoTime();
        return isExcluded(key, now, best(now));
    }

    /**
     * Orders candidates: nodes not excluded first, in their given order; excluded nodes after them,
     * fastest first.
     *
     * @param candidates nodes in the load-balancing policy's order
     * @return a new list
     */
    public List<K> order(List<K> candidates) {
        if (candidates.size() < 2 || scores.isEmpty()) {
            return candidates;
        }
        long now = ticker.nanoTime();
        double best = best(now);
        if (Double.isNaN(best)) {
            return candidates;
        }
        List<K> kept = new ArrayList<>(candidates.size());
        List<K> excluded = null;
        for (K k : candidates) {
            if (isExcluded(k, now, best)) {
                if (excluded == null) {
                    excluded = new ArrayList<>(2);
                }
                excluded.add(k);
            } else {
                kept.add(k);
            }
        }
        if (excluded == null) {
            return candidates;
        }
        excluded.sort((a, b) -> Double.compare(scores.get(a).average, scores.get(b).average));
        kept.addAll(excluded);
        return kept;
    }

    private boolean isExcluded(K key, long now, double best) {
        Score s = scores.get(key);
        if (s == null || Double.isNaN(best)) {
            return false;
        }
        synchronized (s) {
            return s.count >= minMeasurements && now - s.lastNanos < retryPeriodNanos && s.average > threshold * best;
        }
    }

    /** Averages below this count as this much: loopback noise of a few hundred µs excludes nobody. */
    static final double FLOOR_NANOS = 1_000_000;

    /** The best average among nodes with enough recent measurements (at least {@link #FLOOR_NANOS}), or NaN. */
    private double best(long now) {
        double best = Double.NaN;
        for (Score s : scores.values()) {
            synchronized (s) {
                if (s.count >= minMeasurements
                        && now - s.lastNanos < retryPeriodNanos
                        && (Double.isNaN(best) || s.average < best)) {
                    best = s.average;
                }
            }
        }
        return Double.isNaN(best) ? best : Math.max(best, FLOOR_NANOS);
    }

    /**
     * @param key a node
     * @return its current average in nanoseconds, or NaN without measurements
     */
    public double averageNanos(K key) {
        Score s = scores.get(key);
        if (s == null) {
            return Double.NaN;
        }
        synchronized (s) {
            return s.average;
        }
    }

    private final class Score {
        private long count;
        private long lastNanos;
        private double average = Double.NaN;

        synchronized void update(long now, long latencyNanos) {
            if (count == 0 || now - lastNanos >= retryPeriodNanos) {
                // first measurement, or the first after a silence as long as the retry period (a
                // probe of an excluded node): the old average says nothing about the node now, so
                // one probe decides whether a healed node comes back or a slow one stays out
                average = latencyNanos;
                count++;
            } else {
                double keep = Math.exp(-(double) Math.max(0, now - lastNanos) / scaleNanos);
                // a burst of measurements at one instant still moves the average a little each
                keep = Math.min(keep, 0.9);
                average = keep * average + (1 - keep) * latencyNanos;
                count++;
            }
            lastNanos = now;
        }
    }
}

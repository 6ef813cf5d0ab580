package io.github.hedge.cassandra.internal;

import io.github.hedge.cassandra.LatencyAwareOptions;
import io.github.hedge.core.spi.SetApart;
import io.github.hedge.core.spi.StallingTargets;
import io.github.hedge.core.spi.Ticker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per-node latency scores for latency-aware ordering (the idea of the 3.x driver's {@code
 * LatencyAwarePolicy}): per node, the median of its first {@code minMeasurements} measurements,
 * then a time-decayed average of samples clipped at {@link #CLIP} times the average (robust to a
 * healthy node's heavy tail); a node whose score is above {@code threshold} times the lower median
 * of the nodes' scores goes to the back of the plan until {@code retryPeriod} passes without a new measurement, then it
 * is tried again (probed) and scored afresh.
 *
 * <p><b>Censored measurements.</b> A loser cancelled after it ran for some time, or a request the
 * driver gave up on, only shows that the node took at least that long ({@link #recordCensored}).
 * Taken as a latency, such a lower bound pulled a slow node's score down to the hedge delay and let
 * it back into the plans (with the wrapped session's {@code Losers.DROP}, 1-28 of 1000 executions
 * went to a node 250 ms slow). A lower bound never lowers a score, and {@link #LOST_IN_A_ROW} of
 * them with no answer in between, each at least the average of the node's answers, exclude the
 * node.
 *
 * <p><b>Stalls.</b> A node that stops answering (a GC pause, {@code SIGSTOP}, a hung disk) produces
 * no measurement at all until it resumes, so its score cannot move. When the caller reports
 * attempts as they start and end ({@link #started}, {@link #ended}), a node with attempts in flight
 * that has answered nothing for {@link #STALL_FACTOR} times its usual latency (its score, or the
 * reference score, at least {@link #FLOOR_NANOS}) is <i>stalled</i>: it goes to the back of the plan
 * until it answers again, among the slow nodes ranked by how long it has been silent (a lower bound
 * of its latency now).
 *
 * <p><b>Stalls of a share of requests.</b> A node that stalls 10% of its requests for 40-250 ms keeps
 * its peers' average. The caller reports each request's first execution and, when a request sends
 * its first hedge, the first execution's node ({@link #primaryPlaced}, {@link #primaryOverdue}); a
 * node whose share of overdue first executions stands out from its peers' ({@link
 * StallingTargets}, over the retry period, with {@code minMeasurements} on each side) goes to the
 * back of the plan too, until its overdue ones leave that window.
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
    private final StallingTargets<K> stalls;
    private final AtomicLong nextStallCheck;
    private volatile Set<K> stalling = Set.of();

    /** How often the stalling nodes are judged again. */
    private static final long STALL_CHECK_NANOS = 100_000_000L;

    /**
     * Scores with the threshold, scale, retry period and minimum measurements of {@code options}
     * (whether ordering is on is the caller's business: the scores also serve the warm-up).
     *
     * @param options latency-aware options, already validated
     * @param ticker time source
     * @param <K> the node type
     * @return new, empty scores
     */
    public static <K> LatencyScores<K> of(LatencyAwareOptions options, Ticker ticker) {
        return new LatencyScores<>(
                options.exclusionThreshold(),
                options.scale().toNanos(),
                options.retryPeriod().toNanos(),
                options.minMeasurements(),
                ticker);
    }

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
        this.stalls = new StallingTargets<>(
                java.time.Duration.ofNanos(Math.max(retryPeriodNanos, 10_000_000L)), minMeasurements, ticker);
        this.nextStallCheck = new AtomicLong(ticker.nanoTime());
    }

    /**
     * A request's first execution was placed on this node (for the stall test, {@link
     * StallingTargets}).
     *
     * @param key the node
     */
    public void primaryPlaced(K key) {
        stalls.primaryPlaced(key);
    }

    /**
     * A request is sending its first hedge: its first execution, on this node, has not answered in
     * time or failed (for the stall test, {@link StallingTargets}).
     *
     * @param key the primary's node
     */
    public void primaryOverdue(K key) {
        stalls.primaryOverdue(key);
    }

    /** @return the nodes that stall a share of their requests now, judged at most every 100 ms */
    private Set<K> stalling(long now) {
        long next = nextStallCheck.get();
        if (now - next >= 0 && nextStallCheck.compareAndSet(next, now + STALL_CHECK_NANOS)) {
            stalling = stalls.stalling();
        }
        return stalling;
    }

    /**
     * Records one measurement.
     *
     * @param key the node
     * @param latencyNanos its latency, from an answer (a lower bound goes to {@link #recordCensored})
     */
    public void record(K key, long latencyNanos) {
        scores.computeIfAbsent(key, k -> new Score()).update(ticker.nanoTime(), Math.max(0, latencyNanos), false);
    }

    /**
     * Records a censored measurement: the node's attempt was cancelled (it lost the race to
     * another attempt) or timed out after {@code lowerBoundNanos}, so its latency is at least that.
     * A lower bound can raise the node's score but never lowers it, and it does not start the
     * node's score afresh after a silence: an excluded node whose probe was cancelled has not shown
     * that it healed. A bound at least the average of the node's answers is a race lost: {@link #LOST_IN_A_ROW} of
     * them with no answer in between exclude the node (until the retry period passes without a
     * measurement), whatever their values, because a node that loses every race is slow even when
     * each loss is cut short at the hedge delay, below the exclusion threshold. A bound under that
     * average (an attempt cancelled before the node would usually have answered, such as a hedge
     * sent as the primary answered) says nothing of the node's speed and is not counted.
     *
     * @param key the node
     * @param lowerBoundNanos how long its attempt had run when it was cancelled or timed out
     */
    public void recordCensored(K key, long lowerBoundNanos) {
        scores.computeIfAbsent(key, k -> new Score()).update(ticker.nanoTime(), Math.max(0, lowerBoundNanos), true);
    }

    /** Forgets a node (it was removed from the cluster). */
    public void forget(K key) {
        scores.remove(key);
        stalls.forget(key);
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
     * fastest first. At most half the candidates (rounded down) go to the back, the slowest by the
     * same ranking; other excluded nodes keep their place.
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
        List<K> excluded = null;
        for (K k : candidates) {
            if (isExcluded(k, now, best)) {
                if (excluded == null) {
                    excluded = new ArrayList<>(2);
                }
                excluded.add(k);
            }
        }
        if (excluded == null) {
            return candidates;
        }
        // slowest first by what is known of each: its score, or for a stalled node how long it has
        // been silent if that is longer (a lower bound of its latency now), so a healthy node caught
        // in a short hiccup goes before a node that is slow for good, and a node silent for seconds
        // goes last. Ranks are read once: concurrent updates cannot make the sort inconsistent
        int m = excluded.size();
        double[] rank = new double[m];
        Integer[] idx = new Integer[m];
        for (int i = 0; i < m; i++) {
            Score s = scores.get(excluded.get(i));
            idx[i] = i;
            synchronized (s) {
                double avg = Double.isNaN(s.average) ? 0 : s.average;
                rank[i] = s.stalled(now, best) ? Math.max(avg, now - s.quietSince) : avg;
            }
        }
        Arrays.sort(idx, (a, b) -> Double.compare(rank[b], rank[a]));
        List<K> slowestFirst = new ArrayList<>(m);
        for (Integer i : idx) {
            slowestFirst.add(excluded.get(i));
        }
        // at most half the plan goes to the back, the slowest (SetApart): more would send every
        // first execution to the few nodes left (one of three). The others keep their place
        List<K> back = SetApart.join(List.of(), slowestFirst, candidates.size());
        List<K> ordered = new ArrayList<>(candidates.size());
        for (K k : candidates) {
            if (!back.contains(k)) {
                ordered.add(k);
            }
        }
        for (int i = back.size() - 1; i >= 0; i--) {
            ordered.add(back.get(i)); // fastest first
        }
        return ordered;
    }

    private boolean isExcluded(K key, long now, double best) {
        if (stalling(now).contains(key)) {
            return true;
        }
        Score s = scores.get(key);
        if (s == null || Double.isNaN(best)) {
            return false;
        }
        synchronized (s) {
            return s.stalled(now, best)
                    || (now - s.lastNanos < retryPeriodNanos
                            && (s.lostInARow >= LOST_IN_A_ROW
                                    || (s.count >= minMeasurements && s.average > threshold * best)));
        }
    }

    /**
     * An attempt to this node starts; pair with {@link #ended}.
     *
     * @param key the node
     */
    public void started(K key) {
        scores.computeIfAbsent(key, k -> new Score()).started(ticker.nanoTime());
    }

    /**
     * An attempt to this node ended, however (answer, error, cancellation); pair of {@link #started}.
     *
     * @param key the node
     */
    public void ended(K key) {
        Score s = scores.get(key);
        if (s != null) {
            s.ended(ticker.nanoTime());
        }
    }

    /**
     * @param key a node
     * @return whether the node has attempts in flight and has been silent for too long (see the
     *     class comment)
     */
    public boolean isStalled(K key) {
        Score s = scores.get(key);
        if (s == null) {
            return false;
        }
        long now = ticker.nanoTime();
        double best = best(now);
        synchronized (s) {
            return s.stalled(now, best);
        }
    }

    /** A node silent with attempts in flight for this many times its usual latency is stalled. */
    static final double STALL_FACTOR = 4.0;

    /**
     * Censored measurements in a row (no answer in between) that exclude a node. A healthy node
     * loses a race on a few per cent of its attempts at a p95-p99 hedge delay, so five in a row
     * happen about once in 10^7 of its attempts, while a node that turned slow loses every race.
     */
    static final int LOST_IN_A_ROW = 5;

    /** A sample counts at most this many times the current average. */
    static final double CLIP = 4.0;

    /** The least weight of a sample: measurements arriving at one instant still move the average. */
    static final double MIN_WEIGHT = 0.01;

    /** Averages below this count as this much: loopback noise of a few hundred µs excludes nobody. */
    static final double FLOOR_NANOS = 1_000_000;

    /**
     * The reference score: the lower median of the scores of nodes with enough recent measurements
     * (at least {@link #FLOOR_NANOS}), or NaN. A node is excluded when it is far slower than its
     * peers, not than the single fastest node: with the best as reference, one healthy node a little
     * slower than another on a quiet loopback was excluded too, and all load went to one node.
     */
    private double best(long now) {
        return lowerMedianScore(now, false);
    }

    /**
     * The lower median of the scores of the nodes that count, at least {@link #FLOOR_NANOS}, or NaN
     * when none does: with {@code anyMeasurement}, every node measured at least once; otherwise the
     * nodes with {@code minMeasurements} measurements within the retry period.
     */
    private double lowerMedianScore(long now, boolean anyMeasurement) {
        double[] values = new double[scores.size()];
        int n = 0;
        for (Score s : scores.values()) {
            synchronized (s) {
                boolean counts = anyMeasurement
                        ? s.count > 0
                        : s.count >= minMeasurements && now - s.lastNanos < retryPeriodNanos;
                if (counts && n < values.length) {
                    values[n++] = s.average;
                }
            }
        }
        if (n == 0) {
            return Double.NaN;
        }
        Arrays.sort(values, 0, n);
        return Math.max(values[(n - 1) / 2], FLOOR_NANOS);
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
        private final long[] initial = new long[Math.min(minMeasurements, 15)];
        private long count;
        private long lastNanos;
        private double average = Double.NaN;
        /** attempts started and not ended */
        private int inFlight;
        /** when in-flight last went from 0 to 1, or the node last ended an attempt, if later */
        private long quietSince;
        /** censored measurements since the last answer, each at least {@link #answered} */
        private int lostInARow;
        /** time-decayed average of the answers alone (no lower bound), clipped as the score; NaN before one */
        private double answered = Double.NaN;

        private long lastAnsweredNanos;

        synchronized void started(long now) {
            if (inFlight++ == 0) {
                quietSince = now;
            }
        }

        synchronized void ended(long now) {
            if (inFlight > 0) {
                inFlight--;
            }
            quietSince = now;
        }

        /** Caller holds the lock. */
        boolean stalled(long now, double best) {
            if (inFlight == 0) {
                return false;
            }
            double usual = Double.isNaN(average) ? best : average;
            if (Double.isNaN(usual)) {
                return false;
            }
            return now - quietSince > STALL_FACTOR * Math.max(usual, FLOOR_NANOS);
        }

        /**
         * {@code average} moved toward a sample that came {@code elapsedNanos} after the previous
         * one: a time-decayed average whose samples count at most {@link #CLIP} times the average,
         * so a healthy node's heavy tail (one 400 ms answer among 3 ms ones) moves it little, while a
         * node that really slowed down still climbs, up to CLIP-fold per full weight.
         */
        private double decayed(double average, long sampleNanos, long elapsedNanos) {
            double weight = Math.max(MIN_WEIGHT, 1 - Math.exp(-(double) Math.max(0, elapsedNanos) / scaleNanos));
            return average + weight * (Math.min(sampleNanos, CLIP * Math.max(average, FLOOR_NANOS)) - average);
        }

        synchronized void update(long now, long latencyNanos, boolean censored) {
            if (censored) {
                if (Double.isNaN(answered) || latencyNanos >= answered) {
                    // it ran at least as long as the node's answers usually take, without answering
                    if (lostInARow < Integer.MAX_VALUE) {
                        lostInARow++;
                    }
                } // else cancelled sooner (a hedge sent as the primary answered): no sign of slowness
                if (!Double.isNaN(average) && latencyNanos < average) {
                    latencyNanos = (long) average; // a lower bound never lowers the score
                }
            } else {
                lostInARow = 0;
                answered = Double.isNaN(answered)
                        ? latencyNanos
                        : decayed(answered, latencyNanos, now - lastAnsweredNanos);
                lastAnsweredNanos = now;
            }
            if (!censored && count > 0 && now - lastNanos >= retryPeriodNanos) {
                // the first measurement after a silence as long as the retry period (the probe of an
                // excluded node): the old average says nothing about the node now; start over
                count = 0;
            }
            if (count < minMeasurements) {
                // until the node has enough measurements, the median of its first ones: one answer
                // from a healthy node's heavy tail does not make it look slow
                initial[(int) (count % initial.length)] = latencyNanos;
                int n = (int) Math.min(count + 1, initial.length);
                long[] sorted = Arrays.copyOf(initial, n);
                Arrays.sort(sorted);
                average = sorted[(n - 1) / 2];
            } else {
                average = decayed(average, latencyNanos, now - lastNanos);
            }
            count++;
            lastNanos = now;
        }
    }
}

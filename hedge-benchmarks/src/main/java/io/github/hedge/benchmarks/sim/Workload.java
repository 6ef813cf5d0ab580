package io.github.hedge.benchmarks.sim;

import java.util.SplittableRandom;

/**
 * The random draws of one simulation, made once from a seed and shared by every variant, so the
 * variants differ only in how they hedge: per request an arrival instant (Poisson), a latency (or
 * service time) per possible attempt, the primary's replica and the hedge's choice among the
 * replicas not yet tried.
 */
public final class Workload {
    /** Replicas behind every simulated service. */
    public static final int REPLICAS = 3;

    /** Replica names, as reported with {@code AttemptContext.reportTarget}. */
    public static final String[] NAMES = {"replica-0", "replica-1", "replica-2"};

    final int requests;
    final long[] arrivalNanos;
    /** {@code latencyMs[k][i]}: attempt k+1 of request i */
    final double[][] latencyMs;

    final int[] primaryReplica;
    final int[] hedgeChoice;

    /**
     * @param dist the latency distribution
     * @param requests how many requests
     * @param ratePerSecond mean arrival rate (Poisson arrivals)
     * @param attempts latencies drawn per request (the most attempts any variant may send)
     * @param seed the seed
     */
    public Workload(Distribution dist, int requests, double ratePerSecond, int attempts, long seed) {
        this.requests = requests;
        this.arrivalNanos = new long[requests];
        this.latencyMs = new double[attempts][requests];
        this.primaryReplica = new int[requests];
        this.hedgeChoice = new int[requests];
        SplittableRandom rng = new SplittableRandom(seed);
        double t = 0;
        double meanGapNanos = 1e9 / ratePerSecond;
        for (int i = 0; i < requests; i++) {
            t += -meanGapNanos * Math.log(Distribution.open01(rng));
            arrivalNanos[i] = (long) t;
            for (int k = 0; k < attempts; k++) {
                latencyMs[k][i] = dist.sampleMs(rng);
            }
            primaryReplica[i] = rng.nextInt(REPLICAS);
            hedgeChoice[i] = rng.nextInt(REPLICAS);
        }
    }

    /** @return the number of requests */
    public int requests() {
        return requests;
    }

    /**
     * @param i a request
     * @return its arrival instant in virtual nanoseconds
     */
    public long arrivalNanos(int i) {
        return arrivalNanos[i];
    }

    /**
     * @param attempt the attempt number, 1 for the primary
     * @param i a request
     * @return the drawn latency (or service time) of that attempt, in ms
     */
    public double latencyMs(int attempt, int i) {
        return latencyMs[attempt - 1][i];
    }

    /** @return the virtual duration from 0 to the last arrival, in nanoseconds */
    public long spanNanos() {
        return requests == 0 ? 0 : arrivalNanos[requests - 1];
    }

    /**
     * Picks the replica of an attempt: the primary's pre-drawn replica, or for a hedge the
     * pre-drawn choice among the replicas not in {@code tried}.
     *
     * @param attempt the attempt number
     * @param i the request
     * @param tried the targets already tried
     * @return the replica index
     */
    public int replicaFor(int attempt, int i, java.util.List<String> tried) {
        if (attempt == 1 || tried.isEmpty()) {
            return primaryReplica[i];
        }
        int[] free = new int[REPLICAS];
        int n = 0;
        for (int r = 0; r < REPLICAS; r++) {
            if (!tried.contains(NAMES[r])) {
                free[n++] = r;
            }
        }
        if (n == 0) {
            return (primaryReplica[i] + attempt - 1) % REPLICAS; // every replica tried: go round again
        }
        return free[(hedgeChoice[i] + attempt) % n];
    }

    /**
     * @param ms a latency in ms
     * @return it in whole nanoseconds
     */
    public static long nanos(double ms) {
        return Math.max(0L, Math.round(ms * 1e6));
    }
}

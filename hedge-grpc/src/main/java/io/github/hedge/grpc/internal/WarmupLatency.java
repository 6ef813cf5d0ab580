package io.github.hedge.grpc.internal;

import io.github.hedge.core.DelayContext;
import io.github.hedge.core.DelayPolicy;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One method's delay before its percentile has a first estimate: {@code factor} times the lower
 * median, over the backends that answered it so far, of each backend's lower median over its last
 * {@link #SAMPLES_PER_BACKEND} successful attempts, at least {@code minDelayNanos} ({@code
 * minDelayNanos} itself before any attempt succeeded). It is fed by the method's calls, one sample
 * per successful attempt (the attempt's start to its OK close, in the executor's ticker's
 * nanoseconds), so it moves with every answer, while the core's tracker publishes its percentiles
 * only at its refresh and after {@code minSamples}.
 *
 * <p>Why per backend and then the lower median: a slow backend whose primaries are all beaten by
 * hedges never answers, so it adds no sample, and one that does answer slowly is one of three (or
 * of two: then the lower median is the faster one), so it cannot lift the delay; and a backend's
 * first sample, which a new channel may have paid its connection with, is outvoted by its second.
 *
 * <p>Thread-safe: samples go into a small ring per backend under that ring's lock; the delay is
 * recomputed only when asked after new samples, which happens once per call, only while warming up.
 */
public final class WarmupLatency implements DelayPolicy {
    /** Successful attempts kept per backend. */
    public static final int SAMPLES_PER_BACKEND = 16;

    /** Backends tracked per method; attempts on further backends are not sampled. */
    static final int MAX_BACKENDS = 64;

    /** Samples of attempts whose backend the transport did not report. */
    private static final String UNKNOWN = "";

    private final double factor;
    private final long minDelayNanos;
    private final ConcurrentHashMap<String, Ring> backends = new ConcurrentHashMap<>();
    private volatile boolean changed;
    private volatile long delayNanos;

    /**
     * @param factor the multiple of the reference latency, at least 1
     * @param minDelayNanos the smallest delay, positive
     */
    public WarmupLatency(double factor, long minDelayNanos) {
        this.factor = factor;
        this.minDelayNanos = minDelayNanos;
        this.delayNanos = minDelayNanos;
    }

    /**
     * Records one successful attempt.
     *
     * @param backend the backend it ran on ("127.0.0.1:50051"), or {@code null} if unknown
     * @param nanos its latency in nanoseconds; negative values are ignored
     */
    public void record(String backend, long nanos) {
        if (nanos < 0) {
            return;
        }
        String key = backend != null ? backend : UNKNOWN;
        Ring ring = backends.get(key);
        if (ring == null) {
            if (backends.size() >= MAX_BACKENDS) {
                return;
            }
            ring = backends.computeIfAbsent(key, k -> new Ring());
        }
        ring.add(nanos);
        changed = true;
    }

    @Override
    public long delayNanos(DelayContext context) {
        return delayNanos();
    }

    /** @return the warm-up delay now, in nanoseconds */
    public long delayNanos() {
        if (changed) {
            changed = false;
            delayNanos = compute();
        }
        return delayNanos;
    }

    private long compute() {
        long[] medians = new long[backends.size()];
        int n = 0;
        for (Ring r : backends.values()) {
            long m = r.lowerMedian();
            if (m >= 0 && n < medians.length) {
                medians[n++] = m;
            }
        }
        if (n == 0) {
            return minDelayNanos;
        }
        Arrays.sort(medians, 0, n);
        double d = factor * medians[(n - 1) / 2];
        return d >= Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(minDelayNanos, (long) d);
    }

    @Override
    public String toString() {
        return "warmup(" + factor + " x the lower median backend's recent latency, at least " + minDelayNanos / 1e6
                + " ms)";
    }

    /** The last samples of one backend. */
    private static final class Ring {
        private final long[] samples = new long[SAMPLES_PER_BACKEND];
        private int size;
        private int next;

        synchronized void add(long nanos) {
            samples[next] = nanos;
            next = (next + 1) % samples.length;
            if (size < samples.length) {
                size++;
            }
        }

        synchronized long lowerMedian() {
            if (size == 0) {
                return -1;
            }
            long[] copy = Arrays.copyOf(samples, size);
            Arrays.sort(copy);
            return copy[(size - 1) / 2];
        }
    }
}

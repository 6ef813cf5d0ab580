package io.github.hedge.benchmarks.sim;

import java.util.Arrays;

/**
 * Exact percentiles of a set of latencies (nearest-rank: the value at rank {@code ceil(p * n)}),
 * so every variant is summarised the same way and no histogram rounding enters a ratio.
 */
public final class Percentiles {
    private final double[] sortedMs;

    /**
     * @param latenciesMs the latencies in ms; copied and sorted
     */
    public Percentiles(double[] latenciesMs) {
        this(latenciesMs, latenciesMs.length);
    }

    /**
     * @param latenciesMs the latencies in ms
     * @param count how many of them, from index 0, to use
     */
    public Percentiles(double[] latenciesMs, int count) {
        if (count <= 0) {
            throw new IllegalArgumentException("no latencies");
        }
        this.sortedMs = Arrays.copyOf(latenciesMs, count);
        Arrays.sort(sortedMs);
    }

    /** @return the number of values */
    public int count() {
        return sortedMs.length;
    }

    /**
     * @param p a fraction in (0, 1]
     * @return the nearest-rank p-quantile, in ms
     */
    public double at(double p) {
        int i = (int) Math.ceil(p * sortedMs.length) - 1;
        return sortedMs[Math.max(0, Math.min(sortedMs.length - 1, i))];
    }

    /** @return the largest value, in ms */
    public double max() {
        return sortedMs[sortedMs.length - 1];
    }

    /** @return the mean, in ms */
    public double mean() {
        double s = 0;
        for (double v : sortedMs) {
            s += v;
        }
        return s / sortedMs.length;
    }

    /**
     * Writes {@code p50, p90, p99, p999, p9999, max, mean} (ms, 4 decimals) into the current object.
     *
     * @param json the writer, inside an object
     */
    public void writeTo(Json json) {
        json.field("p50", round(at(0.50)))
                .field("p90", round(at(0.90)))
                .field("p99", round(at(0.99)))
                .field("p999", round(at(0.999)))
                .field("p9999", round(at(0.9999)))
                .field("max", round(max()))
                .field("mean", round(mean()));
    }

    /**
     * @param v a value
     * @return {@code v} rounded to 4 decimals
     */
    public static double round(double v) {
        return Double.isFinite(v) ? Math.round(v * 1e4) / 1e4 : v; // NaN stays NaN: "no value", null in JSON
    }

    /**
     * @param v a value
     * @return {@code v} rounded to 5 decimals
     */
    public static double round5(double v) {
        return Math.round(v * 1e5) / 1e5;
    }
}

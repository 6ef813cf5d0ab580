package io.github.hedge.examples.demo;

import java.util.Arrays;

/**
 * What one phase of the demo measured: every call's start time and latency, the attempts the
 * channel sent and how many calls a hedge won. Immutable after construction (the arrays are not
 * exposed). Latencies in nanoseconds.
 */
public final class PhaseResult {
    private final String label;
    private final long[] startNanos;
    private final long[] latencyNanos;
    private final boolean[] ok;
    private final long[] sortedOkNanos;
    private final long attempts;
    private final long hedgesWon;
    private final double seconds;
    private final long gcPauses;
    private final double gcPauseMillis;

    PhaseResult(
            String label,
            long[] startNanos,
            long[] latencyNanos,
            boolean[] ok,
            long attempts,
            long hedgesWon,
            double seconds,
            long gcPauses,
            double gcPauseMillis) {
        this.label = label;
        this.startNanos = startNanos;
        this.latencyNanos = latencyNanos;
        this.ok = ok;
        this.attempts = attempts;
        this.hedgesWon = hedgesWon;
        this.seconds = seconds;
        this.gcPauses = gcPauses;
        this.gcPauseMillis = gcPauseMillis;
        long n = 0;
        for (boolean b : ok) {
            if (b) {
                n++;
            }
        }
        long[] s = new long[(int) n];
        int j = 0;
        for (int i = 0; i < ok.length; i++) {
            if (ok[i]) {
                s[j++] = latencyNanos[i];
            }
        }
        Arrays.sort(s);
        this.sortedOkNanos = s;
    }

    /** @return the phase's name ("no hedging", "hedge-grpc", ...) */
    public String label() {
        return label;
    }

    /** @return calls measured (started in the measured window) */
    public int calls() {
        return latencyNanos.length;
    }

    /** @return calls that ended with an error (deadline, status) */
    public int errors() {
        return latencyNanos.length - sortedOkNanos.length;
    }

    /** @return attempts the channel sent for the measured calls, primaries included */
    public long attempts() {
        return attempts;
    }

    /** @return calls whose answer came from an attempt other than the first */
    public long hedgesWon() {
        return hedgesWon;
    }

    /** @return the measured window, in seconds */
    public double seconds() {
        return seconds;
    }

    /**
     * @return garbage-collection pauses of this JVM while the measured calls ran (the measured
     *     window and the wait for its last answers), as the JVM's collector beans count them
     */
    public long gcPauses() {
        return gcPauses;
    }

    /** @return the time those pauses took, in milliseconds, as the collector beans report it */
    public double gcPauseMillis() {
        return gcPauseMillis;
    }

    /** @return extra attempts per call: attempts / calls - 1 (0.05 = 5% extra load) */
    public double extraLoad() {
        return calls() == 0 ? 0 : (double) attempts / calls() - 1;
    }

    /**
     * @param p in [0, 1]
     * @return the p-quantile of successful calls' latency (nearest rank), in milliseconds; NaN when
     *     no call succeeded
     */
    public double percentileMillis(double p) {
        if (sortedOkNanos.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p * sortedOkNanos.length);
        int idx = Math.min(sortedOkNanos.length - 1, Math.max(0, rank - 1));
        return sortedOkNanos[idx] / 1e6;
    }

    /** @return the slowest successful call, in milliseconds; NaN when none succeeded */
    public double maxMillis() {
        return sortedOkNanos.length == 0 ? Double.NaN : sortedOkNanos[sortedOkNanos.length - 1] / 1e6;
    }

    /** @return successful calls */
    public int successes() {
        return sortedOkNanos.length;
    }

    /**
     * @param n how many, at least 0
     * @return the indexes of the {@code n} slowest successful calls (fewer when fewer succeeded),
     *     slowest first; ties in the order the calls started
     */
    int[] slowest(int n) {
        Integer[] order = new Integer[latencyNanos.length];
        int k = 0;
        for (int i = 0; i < latencyNanos.length; i++) {
            if (ok[i]) {
                order[k++] = i;
            }
        }
        Integer[] okOrder = Arrays.copyOf(order, k);
        Arrays.sort(okOrder, (a, b) -> Long.compare(latencyNanos[b], latencyNanos[a]));
        int m = Math.min(Math.max(0, n), k);
        int[] out = new int[m];
        for (int i = 0; i < m; i++) {
            out[i] = okOrder[i];
        }
        return out;
    }

    /**
     * @param attempts attempts sent for the measured calls, counted by other means than the transport
     * @param hedgesWon calls a hedge answered, counted likewise
     * @return the same calls with these counts
     */
    PhaseResult withAttempts(long attempts, long hedgesWon) {
        return new PhaseResult(
                label, startNanos, latencyNanos, ok, attempts, hedgesWon, seconds, gcPauses, gcPauseMillis);
    }

    long startNanos(int i) {
        return startNanos[i];
    }

    long latencyNanos(int i) {
        return latencyNanos[i];
    }

    boolean ok(int i) {
        return ok[i];
    }
}

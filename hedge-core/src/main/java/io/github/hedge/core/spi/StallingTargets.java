package io.github.hedge.core.spi;

import io.github.hedge.core.internal.Checks;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which targets stall a share of their calls, judged against their peers, for adapters that place
 * attempts (the gRPC balancer, the Cassandra session's plans). A target that stalls 10% of its
 * calls for 40-250 ms has its peers' median, so a latency average or median cannot tell it apart;
 * the hedges it causes can.
 *
 * <p>The adapter reports each call's primary as it places it ({@link #primaryPlaced}) and, when a
 * call places its first hedge, the primary's target, still unanswered then or failed ({@link
 * #primaryOverdue}). Per target, over a sliding {@code window} (kept in ten slices), the share of
 * its primaries that were overdue is compared with its peers' pooled share. A target is
 * <i>stalling</i> when, with at least {@code minPrimaries} primaries on each side, its share is at
 * least twice its peers' and above it by at least {@link #Z} binomial standard deviations. With a
 * p96 delay (about 4% of healthy primaries overdue), a target stalling 10% of its calls among two
 * healthy peers is found within 300 of its primaries; among three healthy targets, none was found
 * stalling in 399 of 400 windows of 300 primaries each ({@code StallingTargetsTest}).
 *
 * <p>It only judges; what to do with a stalling target (keep primaries off it for a while, as the
 * gRPC balancer does) is the adapter's choice. Thread-safe: reports are one short lock per target;
 * {@link #stalling()} sums every target's slices, so callers throttle it (every 100 ms, say).
 *
 * @param <K> the target type (an address string, a driver node...), with value equality
 */
public final class StallingTargets<K> {
    /** Binomial standard deviations by which a target's overdue share must exceed its peers'. */
    public static final double Z = 4.5;

    private static final int SLICES = 10;

    private final long sliceNanos;
    private final int minPrimaries;
    private final Ticker ticker;
    private final Map<K, Counts> counts = new ConcurrentHashMap<>();

    /**
     * @param window how far back reports count; at least 10 ms
     * @param minPrimaries primaries a target, and its peers together, need in the window before it is
     *     judged; at least 1
     * @param ticker time source
     * @throws IllegalArgumentException naming the setting, its range and the value
     */
    public StallingTargets(Duration window, int minPrimaries, Ticker ticker) {
        Objects.requireNonNull(window, "window must not be null");
        if (window.compareTo(Duration.ofMillis(10)) < 0) {
            throw new IllegalArgumentException("window must be at least 10 ms, was " + window);
        }
        this.sliceNanos = window.toNanos() / SLICES;
        this.minPrimaries = (int) Checks.atLeast("minPrimaries", minPrimaries, 1);
        this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
    }

    /**
     * A call's primary was placed on {@code target}.
     *
     * @param target where
     */
    public void primaryPlaced(K target) {
        counts.computeIfAbsent(target, t -> new Counts()).add(slice(), false);
    }

    /**
     * A call is placing its first hedge: its primary, on {@code target}, has not answered in time
     * (or failed).
     *
     * @param target the primary's target
     */
    public void primaryOverdue(K target) {
        counts.computeIfAbsent(target, t -> new Counts()).add(slice(), true);
    }

    /**
     * Forgets a target (it left the cluster).
     *
     * @param target the target
     */
    public void forget(K target) {
        counts.remove(target);
    }

    /**
     * @return the targets stalling now, by the test in the class comment; a new set, iterating the
     *     worst first (the most standard deviations above its peers' share), for {@link
     *     SetApart#join}
     */
    public Set<K> stalling() {
        long slice = slice();
        Map<K, long[]> sums = new HashMap<>();
        long allPrimaries = 0;
        long allOverdue = 0;
        for (Map.Entry<K, Counts> e : counts.entrySet()) {
            long[] s = e.getValue().sums(slice);
            if (s[0] == 0 && s[1] == 0) {
                continue;
            }
            sums.put(e.getKey(), s);
            allPrimaries += s[0];
            allOverdue += s[1];
        }
        Map<K, Double> found = new HashMap<>();
        for (Map.Entry<K, long[]> e : sums.entrySet()) {
            long n = e.getValue()[0];
            long k = Math.min(e.getValue()[1], n);
            long peersN = allPrimaries - e.getValue()[0];
            if (n < minPrimaries || peersN < minPrimaries) {
                continue;
            }
            // the peers' share, with half an overdue primary added so that peers with none yet do
            // not make every overdue primary significant
            double r = Math.min(1, (allOverdue - e.getValue()[1] + 0.5) / (peersN + 1.0));
            double expected = n * r;
            double sd = Math.sqrt(expected * (1 - r));
            if (k >= 2 * expected && sd > 0 && (k - expected) / sd >= Z) {
                found.put(e.getKey(), (k - expected) / sd);
            }
        }
        Set<K> worstFirst = new LinkedHashSet<>();
        found.entrySet().stream()
                .sorted(Map.Entry.<K, Double>comparingByValue().reversed())
                .forEach(e -> worstFirst.add(e.getKey()));
        return worstFirst;
    }

    private long slice() {
        return Math.floorDiv(ticker.nanoTime(), Math.max(1, sliceNanos));
    }

    /** Per-target counts of primaries and overdue primaries, in slices of the window. */
    private static final class Counts {
        private final long[] slices = new long[SLICES];
        private final long[] primaries = new long[SLICES];
        private final long[] overdue = new long[SLICES];

        Counts() {
            java.util.Arrays.fill(slices, Long.MIN_VALUE);
        }

        synchronized void add(long slice, boolean isOverdue) {
            int i = (int) Math.floorMod(slice, (long) SLICES);
            if (slices[i] != slice) {
                slices[i] = slice;
                primaries[i] = 0;
                overdue[i] = 0;
            }
            if (isOverdue) {
                overdue[i]++;
            } else {
                primaries[i]++;
            }
        }

        /** @return {primaries, overdue primaries} in the window's slices ending with {@code slice} */
        synchronized long[] sums(long slice) {
            long n = 0;
            long k = 0;
            for (int i = 0; i < SLICES; i++) {
                long age = slice - slices[i];
                if (slices[i] != Long.MIN_VALUE && age >= 0 && age < SLICES) {
                    n += primaries[i];
                    k += overdue[i];
                }
            }
            return new long[] {n, k};
        }
    }
}

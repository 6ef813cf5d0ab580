package io.github.hedge.http.internal;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.spi.SetApart;
import io.github.hedge.core.spi.StallingTargets;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

/**
 * The placement rule of one service's attempts, the one hedge-grpc's balancer follows: a primary goes
 * round-robin over the instances, skipping those set apart; a hedge goes round-robin over the
 * instances the call has not tried, skipping those set apart; failing that, over the untried ones;
 * failing that, over all of them. Set apart: the instances {@link StallingTargets} judges stalling,
 * at most half the instances at once ({@link SetApart}: one that is apart stays apart while it
 * stalls, and a new one joins while there is room, the worst first). Instances are {@code
 * host:port} targets. Thread-safe.
 */
public final class Placement {
    /** How far back the stalling judgement looks. */
    public static final Duration STALLING_WINDOW = Duration.ofSeconds(10);

    /** Primaries an instance, and its peers together, need in the window before it is judged. */
    public static final int STALLING_MIN_PRIMARIES = 30;

    private static final long STALLING_REFRESH_NANOS = Duration.ofMillis(100).toNanos();

    private final StallingTargets<String> stalling;
    private final Ticker ticker;
    private final AtomicInteger next = new AtomicInteger();
    private volatile Set<String> apart = Set.of();
    /** instances at the latest placement */
    private volatile int instances;

    private volatile long stallingReadAt;
    private volatile boolean stallingRead;

    /** @param ticker the time source of the stalling judgement */
    public Placement(Ticker ticker) {
        this.ticker = ticker;
        this.stalling = new StallingTargets<>(STALLING_WINDOW, STALLING_MIN_PRIMARIES, ticker);
    }

    /**
     * Picks the instance of an attempt, reports it to the attempt and, for a primary, to the
     * stalling judgement; for a hedge, reports the call's primary overdue.
     *
     * @param targets the service's instances now, as {@code host:port}; not empty
     * @param attempt the attempt
     * @return the index in {@code targets} of the instance picked
     */
    public int place(List<String> targets, AttemptContext attempt) {
        int n = targets.size();
        int start = Math.floorMod(next.getAndIncrement(), n);
        Set<String> avoid = apart(n);
        int chosen;
        if (attempt.isHedge()) {
            List<String> tried = attempt.triedTargets();
            if (!tried.isEmpty()) {
                stalling.primaryOverdue(tried.get(0));
            }
            chosen = pick(n, start, i -> !tried.contains(targets.get(i)) && !avoid.contains(targets.get(i)));
            if (chosen < 0) {
                chosen = pick(n, start, i -> !tried.contains(targets.get(i)));
            }
        } else {
            chosen = pick(n, start, i -> !avoid.contains(targets.get(i)));
        }
        if (chosen < 0) {
            chosen = start;
        }
        String target = targets.get(chosen);
        if (!attempt.isHedge()) {
            stalling.primaryPlaced(target);
        }
        attempt.reportTarget(target);
        return chosen;
    }

    /**
     * Forgets an instance that left the service.
     *
     * @param target its {@code host:port}
     */
    public void forget(String target) {
        stalling.forget(target);
    }

    /**
     * @return the instances set apart now (judged stalling, at most half of those the latest
     *     placement chose from), as {@code host:port}; re-judged at most every 100 ms
     */
    public Set<String> stallingNow() {
        int n = instances;
        return n > 0 ? apart(n) : apart;
    }

    private Set<String> apart(int instances) {
        this.instances = instances;
        long now = ticker.nanoTime();
        if (!stallingRead || now - stallingReadAt >= STALLING_REFRESH_NANOS) {
            synchronized (this) {
                if (!stallingRead || now - stallingReadAt >= STALLING_REFRESH_NANOS) {
                    Set<String> stallingNow = stalling.stalling(); // the worst first
                    Set<String> kept = new LinkedHashSet<>(apart);
                    kept.retainAll(stallingNow);
                    kept.addAll(SetApart.join(kept, List.copyOf(stallingNow), instances));
                    apart = Set.copyOf(kept);
                    stallingReadAt = now;
                    stallingRead = true;
                }
            }
        }
        return apart;
    }

    private static int pick(int n, int start, IntPredicate ok) {
        for (int k = 0; k < n; k++) {
            int i = (start + k) % n;
            if (ok.test(i)) {
                return i;
            }
        }
        return -1;
    }
}

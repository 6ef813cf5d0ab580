package io.github.hedge.grpc.internal;

import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.spi.SetApart;
import io.github.hedge.core.spi.StallingTargets;
import io.github.hedge.core.spi.Ticker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Recent latency per backend, as one balancer measured it, and which backends are "slow", by
 * either of two tests against their peers, each side with at least {@code minSamples} samples in
 * the window:
 *
 * <ul>
 *   <li><b>median</b>: its median is above {@code slowRatio} times the lower median of the
 *       backends' medians (a backend slow on every call). Not the fastest backend's: one healthy
 *       backend a little faster than the others would make them all slow;
 *   <li><b>stalls</b>: the share of its primaries that were still unanswered when their call sent
 *       its first hedge (the hedge's placement names the primary's backend) is at least twice its
 *       peers' pooled share, by at least 4.5 ({@link StallingTargets}) binomial standard deviations: a backend
 *       that stalls a share of its calls, whose median is its peers'. With a p96 delay, one backend
 *       stalling 10% of its calls among two healthy peers is found after about 100 of its primaries.
 * </ul>
 *
 * <p><b>Same period.</b> Backends are compared over the same period: when a backend answers for
 * the first time, what was measured before is forgotten. The first backend to connect otherwise
 * takes every call of a cold client (classes loading, code not yet compiled: 100 ms and more on
 * loopback), and its median then stands out from its peers', measured later.
 *
 * <p><b>A minority at most.</b> At most half the backends that answered in the window (rounded down)
 * are slow at once: a backend already out stays out, and a new one joins only while that leaves
 * room, the slowest median first. Without that cap, one backend out for a cold start and a second
 * one out for a few stalls sent nine calls in ten to the last one.
 *
 * <p>A backend found slow stays slow for one window (so it leaves the primary rotation for a while);
 * by then its old samples have left the window and it gets primaries again until it has enough new
 * ones to be judged. The judgement is recomputed at most every 100 ms, off the pick path's common
 * case (one volatile read). Thread-safe.
 */
public final class BackendLatency {
    private static final long REFRESH_NANOS = 100_000_000L;

    private final Ticker ticker;
    private volatile BalancerConfig config;
    private volatile LatencyTracker tracker;
    private final Set<String> known = ConcurrentHashMap.newKeySet();
    /** backends that answered at least once */
    private final Set<String> answered = ConcurrentHashMap.newKeySet();

    private final Map<String, Long> slowUntil = new ConcurrentHashMap<>();
    private final AtomicLong nextRefresh = new AtomicLong();
    private volatile Set<String> slow = Set.of();

    private volatile StallingTargets<String> stalls;
    /** streams that started before this are not measured ({@link #forgetMeasurements}) */
    private volatile long since;

    BackendLatency(BalancerConfig config) {
        this(config, Ticker.system());
    }

    BackendLatency(BalancerConfig config, Ticker ticker) {
        this.ticker = ticker;
        this.nextRefresh.set(ticker.nanoTime());
        configure(config);
    }

    void configure(BalancerConfig c) {
        if (c == config) {
            return;
        }
        BalancerConfig old = config;
        config = c;
        if (old == null || !old.window.equals(c.window) || old.minSamples != c.minSamples) {
            stalls = new StallingTargets<>(c.window, c.minSamples, ticker);
        }
        if (old == null || !old.window.equals(c.window)) {
            tracker = newTracker(c);
        }
    }

    private LatencyTracker newTracker(BalancerConfig c) {
        return LatencyTracker.builder()
                .window(c.window)
                .refreshInterval(c.window.dividedBy(50))
                .ticker(ticker)
                .build();
    }

    long nanoTime() {
        return ticker.nanoTime();
    }

    /**
     * One stream's latency.
     *
     * @param address its backend
     * @param startNanos when it started, {@link #nanoTime()}
     * @param endNanos when it closed, {@link #nanoTime()}
     */
    void record(String address, long startNanos, long endNanos) {
        if (answered.add(address)) {
            forgetMeasurements(endNanos);
        }
        known.add(address);
        if (startNanos - since >= 0) {
            tracker.record(address, endNanos - startNanos);
        }
    }

    /**
     * A backend answered for the first time: the others' measurements so far cover a period it was
     * not measured in (a cold client's first calls all go to the first backend to connect), so the
     * comparison starts over, for the two tests alike, and streams that started before now are not
     * measured (they waited in that period). Backends already out stay out.
     */
    private synchronized void forgetMeasurements(long now) {
        BalancerConfig c = config;
        since = now;
        stalls = new StallingTargets<>(c.window, c.minSamples, ticker);
        tracker = newTracker(c);
    }

    /** A call's primary was placed on {@code address}. */
    void primaryPlaced(String address) {
        known.add(address);
        stalls.primaryPlaced(address);
    }

    /** A call's first hedge is being placed: its primary, on {@code address}, did not answer in time. */
    void primaryOverdue(String address) {
        stalls.primaryOverdue(address);
    }

    /** @return the backends to keep out of the primary rotation now (a snapshot) */
    Set<String> slow() {
        long now = ticker.nanoTime();
        long next = nextRefresh.get();
        if (now - next >= 0 && nextRefresh.compareAndSet(next, now + REFRESH_NANOS)) {
            refresh(now);
        }
        return slow;
    }

    private void refresh(long now) {
        BalancerConfig c = config;
        LatencyTracker t = tracker;
        long hold = c.window.toNanos();
        slowUntil.entrySet().removeIf(e -> e.getValue() - now <= 0);
        Map<String, Long> medians = new HashMap<>();
        int live = 0;
        for (String a : known) {
            long n = t.sampleCount(a);
            if (n > 0) {
                live++;
            }
            if (n >= c.minSamples) {
                long p50 = t.percentileNanos(0.5, a);
                if (p50 >= 0) {
                    medians.put(a, p50);
                }
            }
        }
        // new candidates, the slowest median first, then the stalling ones
        List<String> found = new ArrayList<>();
        if (medians.size() >= 2) {
            long[] sorted = medians.values().stream()
                    .mapToLong(Long::longValue)
                    .sorted()
                    .toArray();
            double limit = Math.max(sorted[(sorted.length - 1) / 2], 1) * c.slowRatio;
            medians.entrySet().stream()
                    .filter(e -> e.getValue() > limit)
                    .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                    .forEach(e -> found.add(e.getKey()));
        }
        if (known.size() >= 2) {
            for (String a : stalls.stalling()) {
                if (!found.contains(a)) {
                    found.add(a);
                }
            }
        }
        // a backend already out and found again stays out for another window; a new one joins
        // only while at most half the backends that answered are out (SetApart)
        for (String a : found) {
            if (slowUntil.containsKey(a)) {
                slowUntil.put(a, now + hold);
            }
        }
        for (String a : SetApart.join(slowUntil.keySet(), found, live)) {
            slowUntil.put(a, now + hold);
        }
        slow = slowUntil.isEmpty() ? Set.of() : Set.copyOf(slowUntil.keySet());
    }
}

package io.github.hedge.grpc.internal;

import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.spi.StallingTargets;
import io.github.hedge.core.spi.Ticker;
import java.util.HashMap;
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
 *   <li><b>median</b>: its median is above {@code slowRatio} times the fastest peer's median (a
 *       backend slow on every call);
 *   <li><b>stalls</b>: the share of its primaries that were still unanswered when their call sent
 *       its first hedge (the hedge's placement names the primary's backend) is at least twice its
 *       peers' pooled share, by at least 4.5 ({@link StallingTargets}) binomial standard deviations: a backend
 *       that stalls a share of its calls, whose median is its peers'. With a p96 delay, one backend
 *       stalling 10% of its calls among two healthy peers is found after about 100 of its primaries.
 * </ul>
 *
 * A backend found slow stays slow for one window (so it leaves the primary rotation for a while);
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
    private final Map<String, Long> slowUntil = new ConcurrentHashMap<>();
    private final AtomicLong nextRefresh = new AtomicLong();
    private volatile Set<String> slow = Set.of();

    private volatile StallingTargets<String> stalls;

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
            tracker = LatencyTracker.builder()
                    .window(c.window)
                    .refreshInterval(c.window.dividedBy(50))
                    .ticker(ticker)
                    .build();
        }
    }

    long nanoTime() {
        return ticker.nanoTime();
    }

    void record(String address, long nanos) {
        known.add(address);
        tracker.record(address, nanos);
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
        Map<String, Long> medians = new HashMap<>();
        long min = Long.MAX_VALUE;
        for (String a : known) {
            if (t.sampleCount(a) >= c.minSamples) {
                long p50 = t.percentileNanos(0.5, a);
                if (p50 >= 0) {
                    medians.put(a, p50);
                    min = Math.min(min, p50);
                }
            }
        }
        if (medians.size() >= 2) {
            long hold = c.window.toNanos();
            double limit = Math.max(min, 1) * c.slowRatio;
            medians.forEach((a, p50) -> {
                if (p50 > limit) {
                    slowUntil.put(a, now + hold);
                }
            });
        }
        if (known.size() >= 2) {
            for (String a : stalls.stalling()) {
                slowUntil.put(a, now + c.window.toNanos());
            }
        }
        slowUntil.entrySet().removeIf(e -> e.getValue() - now <= 0);
        slow = slowUntil.isEmpty() ? Set.of() : Set.copyOf(slowUntil.keySet());
    }
}

package io.github.hedge.examples.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stand-in for the remote replicas of a service, so the examples run anywhere: each replica answers
 * {@code get(key)} after its own delay, asynchronously ({@link #getAsync}) or blocking ({@link #get}).
 * A cancelled future stops the pending answer, as a real client's cancel would. Thread-safe.
 */
public final class Replicas implements AutoCloseable {
    private final Map<String, Duration> delays;
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> cancelled = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "replicas");
        t.setDaemon(true);
        return t;
    });

    /** @param delays each replica's name and how long it takes to answer, in iteration order */
    public Replicas(Map<String, Duration> delays) {
        this.delays = Map.copyOf(delays);
        this.order = List.copyOf(delays.keySet());
        for (String name : order) {
            calls.put(name, new AtomicInteger());
            cancelled.put(name, new AtomicInteger());
        }
    }

    private final List<String> order;
    private final java.util.Set<String> failing = ConcurrentHashMap.newKeySet();

    /**
     * @param replica which replica
     * @param fail whether its answers from now on are failures ({@link IllegalStateException})
     */
    public void failing(String replica, boolean fail) {
        if (fail) {
            failing.add(replica);
        } else {
            failing.remove(replica);
        }
    }

    /**
     * @param tried replicas already tried by this call
     * @return the first replica, in the order given, not in {@code tried} (the first one if all were)
     */
    public String pickExcluding(List<String> tried) {
        for (String name : order) {
            if (!tried.contains(name)) {
                return name;
            }
        }
        return order.get(0);
    }

    /**
     * @param replica which replica
     * @param key what to read
     * @return a future completed with "replica:key" after the replica's delay
     */
    public CompletableFuture<String> getAsync(String replica, String key) {
        calls.get(replica).incrementAndGet();
        CompletableFuture<String> answer = new CompletableFuture<>();
        ScheduledFuture<?> pending = timer.schedule(
                () -> {
                    if (failing.contains(replica)) {
                        answer.completeExceptionally(new IllegalStateException(replica + " is failing"));
                    } else {
                        answer.complete(replica + ":" + key);
                    }
                },
                delays.get(replica).toNanos(),
                TimeUnit.NANOSECONDS);
        answer.whenComplete((v, e) -> {
            if (answer.isCancelled()) {
                pending.cancel(false);
                cancelled.get(replica).incrementAndGet();
            }
        });
        return answer;
    }

    /**
     * @param replica which replica
     * @param key what to read
     * @return "replica:key", after the replica's delay
     * @throws InterruptedException if interrupted while waiting (a losing attempt is)
     */
    public String get(String replica, String key) throws InterruptedException {
        calls.get(replica).incrementAndGet();
        try {
            Thread.sleep(delays.get(replica).toMillis());
        } catch (InterruptedException e) {
            cancelled.get(replica).incrementAndGet();
            throw e;
        }
        if (failing.contains(replica)) {
            throw new IllegalStateException(replica + " is failing");
        }
        return replica + ":" + key;
    }

    /** @return requests each replica received */
    public Map<String, Integer> calls() {
        Map<String, Integer> m = new java.util.LinkedHashMap<>();
        order.forEach(n -> m.put(n, calls.get(n).get()));
        return m;
    }

    /** @return requests each replica saw cancelled or interrupted before answering */
    public Map<String, Integer> cancelled() {
        Map<String, Integer> m = new java.util.LinkedHashMap<>();
        order.forEach(n -> m.put(n, cancelled.get(n).get()));
        return m;
    }

    /** @return the replica names in order */
    public List<String> names() {
        return new ArrayList<>(order);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}

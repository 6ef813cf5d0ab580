package io.github.hedge.core;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An attempt function for tests: each attempt returns a fresh, incomplete future that the test
 * completes, and the probe remembers every attempt's context, future and cancel-hook runs.
 */
final class Probe implements AttemptFunction<String> {
    final List<AttemptContext> contexts = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<String>> futures = new CopyOnWriteArrayList<>();
    final List<Long> startTimes = new CopyOnWriteArrayList<>();
    final AtomicInteger hooksRun = new AtomicInteger();
    private final VirtualTimeScheduler time;

    Probe(VirtualTimeScheduler time) {
        this.time = time;
    }

    @Override
    public CompletableFuture<String> start(AttemptContext ctx) {
        CompletableFuture<String> f = new CompletableFuture<>();
        contexts.add(ctx);
        futures.add(f);
        startTimes.add(time.nanoTime());
        ctx.onCancel(hooksRun::incrementAndGet);
        return f;
    }

    int attempts() {
        return futures.size();
    }

    CompletableFuture<String> attempt(int number) {
        return futures.get(number - 1);
    }

    /** Completes attempt {@code number} after {@code millis} of virtual time from now. */
    void succeedAfter(int number, long millis, String value) {
        CompletableFuture<String> f = attempt(number);
        time.schedule(() -> f.complete(value), millis * 1_000_000L);
    }
}

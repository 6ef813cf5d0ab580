package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.spi.HedgeScheduler;
import io.github.hedge.core.spi.Schedulers;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads, a million calls with random outcomes (sync and async successes and failures,
 * fatal errors, attempts that never answer, caller cancellations, deadlines), on a real
 * scheduler: at the end no timer, attempt or call is left behind and every caller completed
 * exactly once.
 */
class StressTest {

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void should_leave_nothing_pending_and_complete_every_caller_once_when_hammered() throws Exception {
        int threads = 4;
        int callsPerThread = 250_000;
        HedgeScheduler scheduler = Schedulers.threadPool();
        ExecutorService completers = Executors.newFixedThreadPool(2);
        HedgedExecutor ex = HedgedExecutor.of(
                "stress",
                HedgeConfig.builder()
                        .scheduler(scheduler)
                        .maxAttempts(3)
                        .idempotentByDefault(true)
                        .budgetRatio(0.5)
                        .delay(DelayPolicy.fixed(Duration.ofNanos(20_000)))
                        .deadline(Duration.ofMillis(20))
                        .errorClassifier(ErrorClassifier.fatalOn(IllegalArgumentException.class))
                        .build());
        AtomicIntegerArray completions = new AtomicIntegerArray(threads * callsPerThread);
        Semaphore inFlight = new Semaphore(2_000); // bound memory: at most this many open calls
        AtomicLong neverAnswered = new AtomicLong();
        ExecutorService callers = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int base = t * callsPerThread;
            long seed = t;
            done.add(callers.submit(() -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                for (int i = 0; i < callsPerThread; i++) {
                    int id = base + i;
                    inFlight.acquireUninterruptibly();
                    CompletableFuture<Integer> call = ex.executeAsync(ctx -> {
                        int r;
                        synchronized (rnd) {
                            r = rnd.nextInt(100);
                        }
                        if (r < 30) {
                            return CompletableFuture.completedFuture(id);
                        } else if (r < 35) {
                            throw new IOException("sync failure");
                        } else if (r < 37) {
                            return CompletableFuture.failedFuture(new IllegalArgumentException("fatal"));
                        } else if (r < 40) {
                            neverAnswered.incrementAndGet();
                            return new CompletableFuture<>(); // only cancellation ends it
                        }
                        CompletableFuture<Integer> f = new CompletableFuture<>();
                        boolean fail = r < 50;
                        completers.execute(() -> {
                            if (fail) {
                                f.completeExceptionally(new IOException("async failure"));
                            } else {
                                f.complete(id);
                            }
                        });
                        return f;
                    });
                    call.whenComplete((v, e) -> {
                        completions.incrementAndGet(id);
                        inFlight.release();
                    });
                    synchronized (rnd) {
                        if (rnd.nextInt(100) == 0) {
                            call.cancel(true);
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        // every call ends: by an answer, a failure, a cancellation or its 20 ms deadline
        assertThat(inFlight.tryAcquire(2_000, 60, TimeUnit.SECONDS)).isTrue();
        callers.shutdown();
        completers.shutdown();
        assertThat(completers.awaitTermination(60, TimeUnit.SECONDS)).isTrue();

        for (int i = 0; i < completions.length(); i++) {
            if (completions.get(i) != 1) {
                throw new AssertionError("call " + i + " completed " + completions.get(i) + " times");
            }
        }
        HedgeStats stats = ex.stats();
        assertThat(stats.calls()).isEqualTo((long) threads * callsPerThread);
        assertThat(stats.successes() + stats.failures() + stats.deadlineExceeded() + stats.cancelled())
                .isEqualTo(stats.calls());
        assertThat(stats.inFlightCalls()).isZero();
        assertThat(stats.pendingAttempts()).isZero();
        assertThat(stats.pendingTimers()).isZero();
        // the timer queue's one armed task, if any, expires on its own within the 20 us delay
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(1))
                .untilAsserted(() -> assertThat(scheduler.pendingTasks())
                        .as("pending timer tasks")
                        .isZero());
        assertThat(stats.hedgesSent()).isPositive();
        assertThat(neverAnswered.get()).isPositive();
        ((AutoCloseable) scheduler).close();
    }
}

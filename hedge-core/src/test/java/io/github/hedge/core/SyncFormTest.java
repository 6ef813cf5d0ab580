package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.spi.Schedulers;
import io.github.resilience4j.core.ContextPropagator;
import java.io.IOException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The blocking form on real threads (on JDK 21+ the default attempt executor uses virtual
 * threads; the build runs these tests on a newer JDK too). Nothing here asserts a duration: a
 * primary that blocks until interrupted can only lose.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SyncFormTest {

    private static HedgeConfig.Builder config() {
        return HedgeConfig.builder()
                .idempotentByDefault(true)
                .budget(HedgeBudget.unlimited())
                .delay(DelayPolicy.fixed(Duration.ofMillis(1)));
    }

    @Test
    void should_return_hedge_result_and_interrupt_primary_when_primary_blocks() throws Exception {
        HedgedExecutor ex = HedgedExecutor.of("sync", config().build());
        // the attempt that runs the callable first blocks until interrupted; the other answers
        CountDownLatch primaryInterrupted = new CountDownLatch(1);
        CountDownLatch primaryStarted = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        String result = ex.execute(() -> {
            if (first.getAndSet(false)) {
                primaryStarted.countDown();
                try {
                    new CountDownLatch(1).await(); // blocks until interrupted
                } catch (InterruptedException e) {
                    primaryInterrupted.countDown();
                    throw e;
                }
                return "primary";
            }
            primaryStarted.await();
            return "hedge";
        });
        assertThat(result).isEqualTo("hedge");
        assertThat(primaryInterrupted.await(30, TimeUnit.SECONDS)).isTrue();
        // which attempt's thread ran the callable first is up to the OS, so which one "won" is too
        assertThat(ex.stats().hedgesSent()).isEqualTo(1);
    }

    @Test
    void should_rethrow_attempt_exception_when_every_attempt_fails() {
        HedgedExecutor ex = HedgedExecutor.of("sync", config().build());
        assertThatThrownBy(() -> ex.execute(() -> {
                    throw new IOException("down");
                }))
                .isInstanceOf(IOException.class)
                .hasMessage("down");
    }

    @Test
    void should_run_once_when_sync_call_is_not_idempotent() throws Exception {
        HedgedExecutor ex = HedgedExecutor.of("sync", config().build());
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        assertThatThrownBy(() -> ex.execute(CallOptions.nonIdempotent(), () -> {
                    runs.incrementAndGet();
                    throw new IOException("down");
                }))
                .isInstanceOf(IOException.class);
        assertThat(runs).hasValue(1);
    }

    @Test
    void should_run_attempts_on_virtual_threads_when_jdk_has_them() throws Exception {
        HedgedExecutor ex = HedgedExecutor.of("sync", config().build());
        boolean virtual = ex.execute(() -> isVirtual(Thread.currentThread()));
        assertThat(virtual).isEqualTo(Runtime.version().feature() >= 21);
    }

    @Test
    void should_see_caller_thread_locals_when_propagators_are_set() throws Exception {
        ThreadLocal<String> requestId = new ThreadLocal<>();
        ContextPropagator<String> propagator = ThreadLocalPropagator.of(requestId);
        HedgedExecutor ex = HedgedExecutor.of(
                "sync", config().contextPropagators(List.of(propagator)).build());
        requestId.set("req-42");
        try {
            assertThat(ex.execute(requestId::get)).isEqualTo("req-42");
        } finally {
            requestId.remove();
        }
    }

    @Test
    void should_see_caller_thread_locals_when_hedge_starts_on_scheduler_thread() throws Exception {
        ThreadLocal<String> requestId = new ThreadLocal<>();
        HedgedExecutor ex = HedgedExecutor.of(
                "async",
                config().contextPropagators(List.of(ThreadLocalPropagator.of(requestId)))
                        .build());
        Map<Integer, String> seen = new ConcurrentHashMap<>();
        Map<Integer, String> threads = new ConcurrentHashMap<>();
        requestId.set("req-7");
        CompletableFuture<String> call;
        try {
            call = ex.executeAsync(ctx -> {
                seen.put(ctx.attemptNumber(), String.valueOf(requestId.get()));
                threads.put(ctx.attemptNumber(), Thread.currentThread().getName());
                return ctx.attemptNumber() == 1
                        ? new CompletableFuture<>() // never answers: the hedge must
                        : CompletableFuture.completedFuture("hedge");
            });
        } finally {
            requestId.remove();
        }
        assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo("hedge");
        assertThat(threads.get(2)).startsWith("hedge-scheduler");
        assertThat(seen).containsEntry(1, "req-7").containsEntry(2, "req-7");
    }

    @Test
    void should_cancel_attempts_when_caller_thread_is_interrupted() throws Exception {
        HedgedExecutor ex = HedgedExecutor.of(
                "sync", config().maxAttempts(1).scheduler(Schedulers.shared()).build());
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch attemptInterrupted = new CountDownLatch(1);
        Thread caller = new Thread(() -> {
            try {
                ex.execute(() -> {
                    started.countDown();
                    try {
                        new CountDownLatch(1).await();
                    } catch (InterruptedException e) {
                        attemptInterrupted.countDown();
                    }
                    return "never";
                });
            } catch (Exception expected) {
                // InterruptedException
            }
        });
        caller.start();
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        caller.interrupt();
        assertThat(attemptInterrupted.await(30, TimeUnit.SECONDS)).isTrue();
        caller.join();
        assertThat(ex.stats().pendingAttempts()).isZero();
        assertThat(ex.stats().cancelled()).isEqualTo(1);
    }

    @Test
    void should_rethrow_the_callables_own_execution_exception_when_it_throws_one() {
        HedgedExecutor ex = HedgedExecutor.of("sync", config().maxAttempts(1).build());
        java.util.concurrent.ExecutionException own =
                new java.util.concurrent.ExecutionException("own", new IOException("inner"));
        assertThatThrownBy(() -> ex.execute(() -> {
                    throw own;
                }))
                .isSameAs(own);
    }

    @Test
    void should_rethrow_the_callables_own_completion_exception_when_it_throws_one() {
        HedgedExecutor ex = HedgedExecutor.of("sync", config().maxAttempts(1).build());
        java.util.concurrent.CompletionException own =
                new java.util.concurrent.CompletionException("own", new IOException("inner"));
        assertThatThrownBy(() -> ex.execute(() -> {
                    throw own;
                }))
                .isSameAs(own);
    }

    @Test
    void should_throw_interrupted_exception_with_the_flag_cleared_when_caller_is_interrupted() throws Exception {
        HedgedExecutor ex = HedgedExecutor.of(
                "sync", config().maxAttempts(1).scheduler(Schedulers.shared()).build());
        CountDownLatch started = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<Throwable> thrown =
                new java.util.concurrent.atomic.AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean(true);
        Thread caller = new Thread(() -> {
            try {
                ex.execute(() -> {
                    started.countDown();
                    new CountDownLatch(1).await();
                    return "never";
                });
            } catch (Exception e) {
                thrown.set(e);
                flagAfter.set(Thread.currentThread().isInterrupted());
            }
        });
        caller.start();
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        caller.interrupt();
        caller.join();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        // the JDK's convention (Thread.sleep, Future.get): whoever throws InterruptedException clears the flag
        assertThat(flagAfter).isFalse();
        assertThat(ex.stats().cancelled()).isEqualTo(1);
    }

    @Test
    void should_return_the_hedges_value_when_the_losers_cancel_hook_throws_an_error() throws Exception {
        // the sync form's own hook interrupts the loser's thread; a user thread-local hook can throw
        HedgedExecutor ex = HedgedExecutor.of("sync", config().build());
        ex.events().subscribe(e -> {
            throw new AssertionError("listener");
        });
        CountDownLatch primaryStarted = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        String result = ex.execute(() -> {
            if (first.getAndSet(false)) {
                primaryStarted.countDown();
                new CountDownLatch(1).await();
                return "primary";
            }
            primaryStarted.await();
            return "hedge";
        });
        assertThat(result).isEqualTo("hedge");
        assertThat(ex.stats().inFlightCalls()).isZero();
    }

    @Test
    void should_never_mutate_the_callables_exception_when_it_is_a_shared_instance() {
        // no hedge: the second attempt is the retry of the first's failure, so the order is known
        HedgedExecutor ex = HedgedExecutor.of(
                "sync",
                config().maxAttempts(2)
                        .delay(DelayPolicy.fixed(Duration.ofHours(1)))
                        .build());
        IOException shared = new IOException("preallocated");
        AtomicBoolean first = new AtomicBoolean();
        for (int i = 0; i < 200; i++) {
            first.set(true);
            assertThatThrownBy(() -> ex.execute(() -> {
                        if (first.getAndSet(false)) {
                            throw shared;
                        }
                        throw new IllegalStateException("other attempt");
                    }))
                    .isSameAs(shared);
        }
        assertThat(shared.getSuppressed()).isEmpty();
    }

    @Test
    void should_not_run_the_callable_again_when_the_call_ended_after_the_hedge_was_reserved() throws Exception {
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        CountDownLatch primaryRunning = new CountDownLatch(1);
        // the hedge is timed only once the primary's callable runs (a loaded machine may start its
        // thread late): the delay policy is asked right after the primary was submitted
        HedgedExecutor ex = HedgedExecutor.of(
                "sync",
                config().delay(ctx -> {
                            try {
                                primaryRunning.await(30, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            return 0;
                        })
                        .build());
        CountDownLatch release = new CountDownLatch(1);
        // the hedge is reserved, then the caller's thread is interrupted before it starts
        Thread caller = Thread.currentThread();
        ex.events().subscribe(io.github.hedge.core.event.HedgeSent.class, e -> {
            caller.interrupt();
            // hold the hedge between its reservation and its start until the caller has ended the call
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (ex.stats().cancelled() == 0 && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        });
        assertThatThrownBy(() -> ex.execute(() -> {
                    runs.incrementAndGet();
                    primaryRunning.countDown();
                    release.await();
                    return "never";
                }))
                .isInstanceOf(InterruptedException.class);
        release.countDown();
        assertThat(runs).hasValue(1); // only the primary's callable ever ran
        assertThat(ex.stats().cancelled()).isEqualTo(1);
    }

    private static boolean isVirtual(Thread t) {
        try {
            Method m = Thread.class.getMethod("isVirtual");
            return (boolean) m.invoke(t);
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }
}

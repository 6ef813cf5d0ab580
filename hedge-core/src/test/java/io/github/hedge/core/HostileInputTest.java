package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.ClosableHedgeScheduler;
import io.github.hedge.core.spi.Schedulers;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.github.resilience4j.core.ContextPropagator;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The executor's promises under hostile inputs: stages of every shape, hooks and user code that
 * throw anything, closed schedulers, pushback with failures, completion from outside by every
 * method of {@code CompletableFuture}, shared exception instances. Virtual time unless stated.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS) // a regression here tends to hang a call: fail instead
class HostileInputTest {
    private static final long MS = 1_000_000L;

    private VirtualTimeScheduler time;
    private List<HedgeEvent> events;

    @BeforeEach
    void setUp() {
        time = new VirtualTimeScheduler();
        events = new CopyOnWriteArrayList<>();
    }

    private HedgeConfig.Builder config() {
        return HedgeConfig.builder()
                .ticker(time)
                .scheduler(time)
                .idempotentByDefault(true)
                .budget(HedgeBudget.unlimited())
                .delay(DelayPolicy.fixed(Duration.ofMillis(10)));
    }

    private HedgedExecutor executor(HedgeConfig.Builder b) {
        HedgedExecutor e = HedgedExecutor.of("hostile", b.build());
        e.events().subscribe(events::add);
        return e;
    }

    private <E extends HedgeEvent> List<E> eventsOf(Class<E> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** Nothing in flight, nothing pending, no timer queued. */
    private static void assertSettled(HedgedExecutor ex) {
        HedgeStats s = ex.stats();
        assertThat(s.inFlightCalls()).isZero();
        assertThat(s.pendingAttempts()).isZero();
        assertThat(s.pendingTimers()).isZero();
    }

    /** Throws {@code t} whatever its type, as Kotlin code or {@code @SneakyThrows} do. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
        throw (E) t;
    }

    /**
     * A {@link CompletionStage} that is not a {@code Future} and refuses {@code toCompletableFuture}
     * (the interface allows both), delegating the rest to {@code delegate}.
     */
    @SuppressWarnings("unchecked")
    private static <T> CompletionStage<T> foreignStage(CompletableFuture<T> delegate) {
        CompletionStage<T> minimal = delegate.minimalCompletionStage();
        return (CompletionStage<T>) Proxy.newProxyInstance(
                HostileInputTest.class.getClassLoader(), new Class<?>[] {CompletionStage.class}, (p, m, args) -> {
                    if (m.getName().equals("toCompletableFuture")) {
                        throw new UnsupportedOperationException("foreign stage");
                    }
                    try {
                        return m.invoke(minimal, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    // ------------------------------------------------------------ 1. any CompletionStage

    @Test
    void should_answer_with_the_value_when_primary_returns_a_completed_minimal_stage() throws Exception {
        HedgedExecutor ex = executor(config());
        CompletableFuture<String> call = ex.executeAsync(ctx -> CompletableFuture.completedStage("v"));
        assertThat(call.get()).isEqualTo("v");
        assertSettled(ex);
    }

    @Test
    void should_fail_with_the_stage_error_when_every_attempt_returns_a_failed_minimal_stage() {
        HedgedExecutor ex = executor(config().maxAttempts(2));
        IOException down = new IOException("down");
        CompletableFuture<String> call = ex.executeAsync(ctx -> CompletableFuture.failedStage(down));
        time.runUntilIdle();
        assertThatThrownBy(call::get)
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isSameAs(down);
        assertThat(ex.stats().attempts()).isEqualTo(2); // the retryable failure was retried
        assertSettled(ex);
    }

    @Test
    void should_win_with_the_hedge_when_the_hedge_returns_a_minimal_stage() throws Exception {
        HedgedExecutor ex = executor(config());
        CompletableFuture<String> primary = new CompletableFuture<>();
        CompletableFuture<String> hedge = new CompletableFuture<>();
        CompletableFuture<String> call =
                ex.executeAsync(ctx -> ctx.attemptNumber() == 1 ? primary : hedge.minimalCompletionStage());
        time.advance(Duration.ofMillis(10));
        hedge.complete("hedge");
        assertThat(call.get()).isEqualTo("hedge");
        assertThat(primary).isCancelled();
        assertSettled(ex);
    }

    @Test
    void should_answer_when_a_hedge_returns_an_already_completed_minimal_stage() throws Exception {
        HedgedExecutor ex = executor(config());
        CompletableFuture<String> primary = new CompletableFuture<>();
        CompletableFuture<String> call =
                ex.executeAsync(ctx -> ctx.attemptNumber() == 1 ? primary : CompletableFuture.completedStage("hedge"));
        time.advance(Duration.ofMillis(10)); // the hedge starts on the scheduler thread
        assertThat(call.get()).isEqualTo("hedge");
        assertThat(primary).isCancelled();
        assertSettled(ex);
    }

    @Test
    void should_treat_a_foreign_stage_as_an_ordinary_outcome_when_it_is_no_future() throws Exception {
        HedgedExecutor ex = executor(config());
        CompletableFuture<String> primary = new CompletableFuture<>();
        CompletableFuture<String> hedge = new CompletableFuture<>();
        CompletableFuture<String> call =
                ex.executeAsync(ctx -> foreignStage(ctx.attemptNumber() == 1 ? primary : hedge));
        time.advance(Duration.ofMillis(10));
        hedge.complete("hedge");
        assertThat(call.get()).isEqualTo("hedge");
        assertSettled(ex); // the losing foreign stage cannot be cancelled, and that is not an error
    }

    @Test
    void should_fail_only_that_attempt_when_its_stage_refuses_a_callback() throws Exception {
        HedgedExecutor ex = executor(config());
        CompletableFuture<String> hedge = new CompletableFuture<>();
        @SuppressWarnings("unchecked")
        CompletionStage<String> refusing = (CompletionStage<String>) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {CompletionStage.class}, (p, m, args) -> {
                    throw new IllegalStateException("no callbacks here");
                });
        CompletableFuture<String> call = ex.executeAsync(ctx -> ctx.attemptNumber() == 1 ? refusing : hedge);
        // the primary's failure is retryable: the next attempt starts at once
        assertThat(ex.stats().attempts()).isEqualTo(2);
        hedge.complete("second");
        assertThat(call.get()).isEqualTo("second");
        assertSettled(ex);
    }

    // ------------------------------------------------------------ 2. hooks and user code that throw anything

    @Test
    void should_deliver_the_winning_hedge_when_a_losers_cancel_hook_throws_an_error() throws Exception {
        HedgedExecutor ex = executor(config());
        CompletableFuture<String> hedge = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            if (ctx.attemptNumber() == 1) {
                ctx.onCancel(() -> {
                    throw new AssertionError("hook");
                });
                return new CompletableFuture<>();
            }
            return hedge;
        });
        time.advance(Duration.ofMillis(10));
        hedge.complete("hedge");
        assertThat(call.get()).isEqualTo("hedge");
        assertSettled(ex);
    }

    @Test
    void should_end_the_call_at_its_deadline_when_a_cancel_hook_throws_an_undeclared_checked_exception() {
        HedgedExecutor ex = executor(config().deadline(Duration.ofMillis(50)));
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            ctx.onCancel(() -> {
                throw sneaky(new IOException("sneaky"));
            });
            return new CompletableFuture<>();
        });
        time.advance(Duration.ofMillis(50));
        assertThatThrownBy(call::get).cause().isInstanceOf(DeadlineExceededException.class);
        assertSettled(ex);
    }

    @Test
    void should_cancel_the_others_when_a_losing_future_throws_from_cancel() throws Exception {
        HedgedExecutor ex = executor(config().maxAttempts(3));
        CompletableFuture<String> hostile = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterrupt) {
                throw new StackOverflowError("cancel");
            }
        };
        CompletableFuture<String> third = new CompletableFuture<>();
        CompletableFuture<String> winner = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(ctx -> switch (ctx.attemptNumber()) {
            case 1 -> hostile;
            case 2 -> third;
            default -> winner;
        });
        time.advance(Duration.ofMillis(20));
        winner.complete("third");
        assertThat(call.get()).isEqualTo("third");
        assertThat(third).isCancelled();
        assertSettled(ex);
    }

    @Test
    void should_deliver_the_value_when_a_listener_throws_an_error() throws Exception {
        HedgedExecutor ex = executor(config());
        ex.events().subscribe(HedgeWon.class, e -> {
            throw new OutOfMemoryError("listener");
        });
        ex.events().subscribe(CallCompleted.class, e -> {
            throw sneaky(new IOException("listener"));
        });
        CompletableFuture<String> hedge = new CompletableFuture<>();
        CompletableFuture<String> call =
                ex.executeAsync(ctx -> ctx.attemptNumber() == 1 ? new CompletableFuture<>() : hedge);
        time.advance(Duration.ofMillis(10));
        hedge.complete("hedge");
        assertThat(call.get()).isEqualTo("hedge");
        assertSettled(ex);
    }

    @Test
    void should_run_the_call_unhedged_when_the_delay_policy_throws_an_error() throws Exception {
        HedgedExecutor ex = executor(config().delay(ctx -> {
            throw new LinkageError("policy");
        }));
        CompletableFuture<String> primary = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(ctx -> primary);
        time.advance(Duration.ofSeconds(1));
        assertThat(ex.stats().attempts()).isEqualTo(1);
        assertThat(eventsOf(NotHedged.class))
                .extracting(NotHedged::reason)
                .containsExactly(NotHedged.Reason.POLICY_DECLINED);
        primary.complete("primary");
        assertThat(call.get()).isEqualTo("primary");
        assertSettled(ex);
    }

    @Test
    void should_treat_the_failure_as_retryable_when_the_error_classifier_throws_a_checked_exception() throws Exception {
        HedgedExecutor ex = executor(config().errorClassifier(e -> {
            throw sneaky(new IOException("classifier"));
        }));
        CompletableFuture<String> second = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(ctx ->
                ctx.attemptNumber() == 1 ? CompletableFuture.failedFuture(new IllegalStateException("first")) : second);
        second.complete("second");
        assertThat(call.get()).isEqualTo("second");
        assertSettled(ex);
    }

    @Test
    void should_fail_the_call_instead_of_hanging_when_a_context_propagator_throws_before_a_retry() {
        ContextPropagator<String> throwingOnCopy = new ContextPropagator<>() {
            @Override
            public Supplier<Optional<String>> retrieve() {
                return () -> Optional.of("ctx");
            }

            @Override
            public Consumer<Optional<String>> copy() {
                return v -> {
                    throw new NoClassDefFoundError("propagator");
                };
            }

            @Override
            public Consumer<Optional<String>> clear() {
                return v -> {};
            }
        };
        HedgedExecutor ex = executor(config().contextPropagators(List.of(throwingOnCopy)));
        IllegalStateException first = new IllegalStateException("first");
        CompletableFuture<String> call = ex.executeAsync(ctx -> CompletableFuture.failedFuture(first));
        time.runUntilIdle();
        // the reserved retry fails with the propagator's error (an Error: fatal by default)
        assertThat(call).isCompletedExceptionally();
        assertThatThrownBy(call::get).cause().isInstanceOf(NoClassDefFoundError.class);
        assertSettled(ex);
    }

    @Test
    void should_answer_with_the_primary_when_a_context_propagator_throws_while_the_hedge_timer_is_armed()
            throws Exception {
        AtomicInteger retrievals = new AtomicInteger();
        ContextPropagator<String> failingSecondRetrieve = new ContextPropagator<>() {
            @Override
            public Supplier<Optional<String>> retrieve() {
                return () -> {
                    if (retrievals.incrementAndGet() > 1) { // the call's own retrieval works, the timer's not
                        throw sneaky(new IOException("propagator"));
                    }
                    return Optional.of("ctx");
                };
            }

            @Override
            public Consumer<Optional<String>> copy() {
                return v -> {};
            }

            @Override
            public Consumer<Optional<String>> clear() {
                return v -> {};
            }
        };
        HedgedExecutor ex = executor(config().contextPropagators(List.of(failingSecondRetrieve)));
        CompletableFuture<String> primary = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(ctx -> primary); // must not throw: the primary runs
        time.advance(Duration.ofMillis(100));
        assertThat(ex.stats().attempts()).isEqualTo(1);
        primary.complete("primary");
        assertThat(call.get()).isEqualTo("primary");
        assertSettled(ex);
    }

    @Test
    void should_hedge_never_rather_than_at_once_when_a_custom_policy_returns_long_max_value() throws Exception {
        HedgedExecutor ex = executor(config().delay(ctx -> Long.MAX_VALUE)); // "very long", not NO_HEDGE
        CompletableFuture<String> primary = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(ctx -> primary);
        time.advance(Duration.ofDays(364));
        assertThat(ex.stats().attempts())
                .as("a due time that overflowed would fire at once")
                .isEqualTo(1);
        primary.complete("primary");
        assertThat(call.get()).isEqualTo("primary");
        assertSettled(ex);
    }

    @Test
    void should_fail_the_attempt_not_the_executor_when_a_foreign_exception_throws_from_get_cause() throws Exception {
        HedgedExecutor ex = executor(config());
        java.util.concurrent.CompletionException hostile =
                new java.util.concurrent.CompletionException("hostile", null) {
                    @Override
                    public synchronized Throwable getCause() {
                        throw new IllegalStateException("getCause");
                    }
                };
        CompletableFuture<String> second = new CompletableFuture<>();
        CompletableFuture<String> call =
                ex.executeAsync(ctx -> ctx.attemptNumber() == 1 ? CompletableFuture.failedFuture(hostile) : second);
        second.complete("second");
        assertThat(call.get()).isEqualTo("second");
        assertSettled(ex);
    }

    // ------------------------------------------------------------ 4. a closed scheduler

    @Test
    void should_fail_at_once_and_say_so_when_a_call_with_a_deadline_arrives_after_the_scheduler_closed()
            throws Exception {
        ClosableHedgeScheduler scheduler = Schedulers.threadPool();
        HedgedExecutor ex = HedgedExecutor.of(
                "closed",
                HedgeConfig.builder()
                        .scheduler(scheduler)
                        .idempotentByDefault(true)
                        .budget(HedgeBudget.unlimited())
                        .delay(DelayPolicy.fixed(Duration.ofSeconds(5)))
                        .build());
        ex.events().subscribe(events::add);
        // a call arms both timer queues, then answers; their armed tasks stay with the scheduler
        CompletableFuture<String> earlier = new CompletableFuture<>();
        CompletableFuture<String> first = ex.executeAsync(
                CallOptions.builder().deadline(Duration.ofSeconds(10)).build(), ctx -> earlier);
        earlier.complete("ok");
        assertThat(first.get()).isEqualTo("ok");

        scheduler.close(); // discards the armed tasks

        CompletableFuture<String> never = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(
                CallOptions.builder().deadline(Duration.ofMillis(300)).build(), ctx -> never);
        // no timer can fire any more: the call must not wait for one
        assertThat(call).isCompletedExceptionally();
        assertThatThrownBy(call::get).cause().isInstanceOf(RejectedExecutionException.class);
        assertThat(never).isCancelled();
        assertThat(eventsOf(NotHedged.class))
                .extracting(NotHedged::reason)
                .contains(NotHedged.Reason.SCHEDULER_REJECTED);

        // without a deadline the call runs unhedged and its attempt still answers it
        CompletableFuture<String> answer = new CompletableFuture<>();
        CompletableFuture<String> unhedged = ex.executeAsync(ctx -> answer);
        answer.complete("answer");
        assertThat(unhedged.get()).isEqualTo("answer");
        assertThat(ex.stats().inFlightCalls()).isZero();
        assertThat(ex.stats().pendingAttempts()).isZero();
    }

    private HedgedExecutor onRealScheduler(ClosableHedgeScheduler scheduler, Duration delay) {
        HedgedExecutor ex = HedgedExecutor.of(
                "closing",
                HedgeConfig.builder()
                        .scheduler(scheduler)
                        .idempotentByDefault(true)
                        .budget(HedgeBudget.unlimited())
                        .delay(DelayPolicy.fixed(delay))
                        .build());
        ex.events().subscribe(events::add);
        return ex;
    }

    @Test
    void should_settle_calls_waiting_on_timers_when_a_thread_pool_scheduler_closes_under_them() throws Exception {
        assertCallsSettledWhenClosed(Schedulers.threadPool());
    }

    @Test
    void should_settle_calls_waiting_on_timers_when_a_hashed_wheel_scheduler_closes_under_them() throws Exception {
        assertCallsSettledWhenClosed(Schedulers.hashedWheel(Duration.ofMillis(1)));
    }

    private void assertCallsSettledWhenClosed(ClosableHedgeScheduler scheduler) throws Exception {
        HedgedExecutor ex = onRealScheduler(scheduler, Duration.ofHours(1));
        // waits on its deadline (and a hedge timer): nothing else could end it
        CompletableFuture<String> never = new CompletableFuture<>();
        CompletableFuture<String> bounded = ex.executeAsync(
                CallOptions.builder().deadline(Duration.ofHours(2)).build(), ctx -> never);
        // waits on a hedge timer only: its primary still answers
        CompletableFuture<String> answer = new CompletableFuture<>();
        CompletableFuture<String> unbounded = ex.executeAsync(ctx -> answer);
        // every attempt failed; the retry waits out a pushback on a timer: nothing runs
        IllegalStateException down = new IllegalStateException("UNAVAILABLE");
        CompletableFuture<String> waiting = ex.executeAsync(ctx -> {
            ctx.pushback(Duration.ofHours(1));
            return CompletableFuture.failedFuture(down);
        });
        assertThat(ex.stats().pendingTimers())
                .as("deadline + 2 hedge timers + 1 pushback wait")
                .isEqualTo(4);

        scheduler.close();

        assertThat(bounded).isCompletedExceptionally();
        assertThatThrownBy(bounded::get).cause().isInstanceOf(RejectedExecutionException.class);
        assertThat(never).isCancelled();
        assertThat(waiting).isCompletedExceptionally();
        assertThatThrownBy(waiting::get).cause().isSameAs(down);
        assertThat(unbounded).isNotDone();
        answer.complete("answer");
        assertThat(unbounded.get()).isEqualTo("answer");
        assertThat(eventsOf(NotHedged.class))
                .extracting(NotHedged::reason)
                .contains(NotHedged.Reason.SCHEDULER_REJECTED);
        assertSettled(ex);
    }

    // ------------------------------------------------------------ 5. pushback with a failure

    @Test
    void should_wait_out_the_pushback_before_retrying_when_it_arrives_with_a_failure() throws Exception {
        HedgedExecutor ex = executor(config());
        CompletableFuture<String> retry = new CompletableFuture<>();
        List<Long> starts = new CopyOnWriteArrayList<>();
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            starts.add(time.nanoTime());
            if (ctx.attemptNumber() == 1) {
                ctx.pushback(Duration.ofSeconds(1)); // as a gRPC status with grpc-retry-pushback-ms
                return CompletableFuture.failedFuture(new IllegalStateException("UNAVAILABLE"));
            }
            return retry;
        });
        time.advanceNanos(1000 * MS - 1);
        assertThat(starts).hasSize(1);
        assertThat(call).isNotDone();
        time.advanceNanos(1);
        assertThat(starts).containsExactly(0L, 1000 * MS);
        assertThat(eventsOf(HedgeSent.class))
                .extracting(HedgeSent::reason)
                .containsExactly(HedgeSent.Reason.PREVIOUS_FAILED);
        retry.complete("after pushback");
        assertThat(call.get()).isEqualTo("after pushback");
        assertSettled(ex);
    }

    @Test
    void should_fail_with_the_primary_error_when_the_budget_denies_the_retry_after_a_pushback() {
        HedgeBudget empty = HedgeBudget.builder().ratio(0.0001).ticker(time).build();
        HedgedExecutor ex = executor(config().budget(empty));
        IllegalStateException down = new IllegalStateException("UNAVAILABLE");
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            ctx.pushback(Duration.ofMillis(100));
            return CompletableFuture.failedFuture(down);
        });
        assertThat(call).isNotDone();
        time.advance(Duration.ofMillis(100));
        assertThatThrownBy(call::get).cause().isSameAs(down);
        assertSettled(ex);
    }

    @Test
    void should_end_at_the_deadline_when_pushback_outlasts_it() {
        HedgedExecutor ex = executor(config().deadline(Duration.ofMillis(200)));
        AtomicInteger attempts = new AtomicInteger();
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            attempts.incrementAndGet();
            ctx.pushback(Duration.ofSeconds(10));
            return CompletableFuture.failedFuture(new IllegalStateException("UNAVAILABLE"));
        });
        time.advance(Duration.ofMillis(200));
        assertThatThrownBy(call::get).cause().isInstanceOf(DeadlineExceededException.class);
        assertThat(attempts).hasValue(1);
        assertSettled(ex);
    }

    // ------------------------------------------------------------ 6. every way to complete the caller's future

    @Test
    void should_cancel_attempts_and_stop_hedging_when_the_caller_obtrudes_a_value() {
        HedgedExecutor ex = executor(config().maxAttempts(3));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        call.obtrudeValue("mine");
        time.advance(Duration.ofMillis(100));
        assertThat(probe.attempts()).isEqualTo(1);
        assertThat(probe.attempt(1)).isCancelled();
        assertThat(call.join()).isEqualTo("mine");
        assertSettled(ex);
    }

    @Test
    void should_cancel_attempts_when_the_caller_obtrudes_an_exception() {
        HedgedExecutor ex = executor(config().maxAttempts(3));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        call.obtrudeException(new IOException("mine"));
        time.advance(Duration.ofMillis(100));
        assertThat(probe.attempts()).isEqualTo(1);
        assertThat(probe.attempt(1)).isCancelled();
        assertSettled(ex);
    }

    @Test
    void should_cancel_attempts_and_stop_hedging_when_the_caller_completes_async() {
        HedgedExecutor ex = executor(config().maxAttempts(3));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        call.completeAsync(() -> "mine", Runnable::run);
        time.advance(Duration.ofMillis(100));
        assertThat(probe.attempts()).isEqualTo(1);
        assertThat(probe.attempt(1)).isCancelled();
        assertThat(call.join()).isEqualTo("mine");
        assertSettled(ex);
    }

    // ------------------------------------------------------------ 8. shared exception instances

    @Test
    void should_never_mutate_an_attempts_exception_when_instances_are_shared() {
        HedgedExecutor ex = executor(config().maxAttempts(3).deadline(Duration.ofSeconds(1)));
        RuntimeException shared = new RuntimeException("preallocated"); // as Netty and drivers do
        for (int i = 0; i < 1000; i++) {
            CompletableFuture<String> call = ex.executeAsync(ctx -> CompletableFuture.failedFuture(
                    ctx.attemptNumber() == 1 ? shared : new IllegalStateException("other " + ctx.attemptNumber())));
            time.runUntilIdle();
            assertThatThrownBy(call::get).cause().isSameAs(shared);
            assertThat(shared.getSuppressed()).as("call %d", i).isEmpty();
        }
        // a deadline exception is the executor's own: the attempts' failures may be attached to it
        CompletableFuture<String> slow = ex.executeAsync(
                ctx -> ctx.attemptNumber() < 3 ? CompletableFuture.failedFuture(shared) : new CompletableFuture<>());
        time.advance(Duration.ofSeconds(1));
        assertThatThrownBy(slow::get)
                .cause()
                .isInstanceOf(DeadlineExceededException.class)
                .satisfies(e -> assertThat(e.getSuppressed()).containsOnly(shared));
        ErrorClassifier fatal = e -> ErrorClassifier.Decision.FATAL;
        HedgedExecutor fatalEx = executor(config().errorClassifier(fatal));
        CompletableFuture<String> f = fatalEx.executeAsync(ctx -> CompletableFuture.failedFuture(shared));
        assertThatThrownBy(f::get).cause().isSameAs(shared);
        assertThat(shared.getSuppressed()).isEmpty();
    }

    // ------------------------------------------------------------ 12. huge pushback

    @Test
    void should_saturate_and_not_throw_when_pushback_is_huge() {
        HedgedExecutor ex = executor(config());
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            assertThatCode(() -> ctx.pushback(Duration.ofSeconds(10_000_000_000L)))
                    .doesNotThrowAnyException();
            return probe.start(ctx);
        });
        time.advance(Duration.ofDays(1).minusNanos(1));
        assertThat(probe.attempts()).isEqualTo(1);
        call.cancel(true);
        assertSettled(ex);
    }

    // ------------------------------------------------------------ 16. a cancel racing a reserved hedge

    @Test
    void should_not_call_the_attempt_function_when_the_caller_cancels_after_the_hedge_was_reserved() {
        HedgedExecutor ex = executor(config());
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        // HedgeSent is published after the hedge is reserved and before it starts: the race, made exact
        ex.events().subscribe(HedgeSent.class, e -> call.cancel(true));
        time.advance(Duration.ofMillis(10));
        assertThat(call).isCancelled();
        assertThat(probe.attempts()).isEqualTo(1);
        assertSettled(ex);
    }
}

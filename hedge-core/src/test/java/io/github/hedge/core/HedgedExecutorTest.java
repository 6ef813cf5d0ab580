package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.AttemptStarted;
import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeEventListener;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.event.Subscription;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.github.resilience4j.core.ContextPropagator;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The real executor in virtual time: no sleeps, no wall-clock assertions. */
class HedgedExecutorTest {
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
                .budget(HedgeBudget.unlimited());
    }

    private HedgedExecutor executor(HedgeConfig.Builder b) {
        HedgedExecutor e = HedgedExecutor.of("test", b.build());
        e.events().subscribe(events::add);
        return e;
    }

    /**
     * No hedge timer or deadline is queued, and the scheduler holds at most the timer queues' armed
     * tasks (one for hedges, one for deadlines), which expire on their own at their due times.
     */
    private void assertNoTimerLeft(HedgedExecutor ex) {
        assertThat(ex.stats().pendingTimers()).isZero();
        assertThat(time.pendingTasks()).isLessThanOrEqualTo(2);
        time.runUntilIdle();
        assertThat(time.pendingTasks()).isZero();
    }

    private <E extends HedgeEvent> List<E> eventsOf(Class<E> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    @Test
    void should_send_hedge_exactly_at_fixed_delay_when_primary_is_slow() throws Exception {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        Probe probe = new Probe(time);

        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advanceNanos(10 * MS - 1);
        assertThat(probe.attempts()).isEqualTo(1);
        time.advanceNanos(1);
        assertThat(probe.attempts()).isEqualTo(2);
        assertThat(probe.startTimes).containsExactly(0L, 10 * MS);
        assertThat(probe.contexts.get(1).isHedge()).isTrue();

        probe.succeedAfter(2, 3, "hedge");
        time.advance(Duration.ofMillis(3));

        assertThat(call.get()).isEqualTo("hedge");
        assertThat(probe.attempt(1)).isCancelled();
        assertThat(probe.hooksRun).hasValue(1);
        assertThat(eventsOf(HedgeWon.class))
                .singleElement()
                .extracting(HedgeWon::attemptNumber)
                .isEqualTo(2);
        assertNoTimerLeft(ex);
        assertThat(ex.stats().pendingAttempts()).isZero();
        assertThat(ex.stats().inFlightCalls()).isZero();
    }

    @Test
    void should_arm_no_timer_when_primary_completed_synchronously() throws Exception {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        CompletableFuture<String> call = ex.executeAsync(ctx -> CompletableFuture.completedFuture("now"));
        assertThat(call.get()).isEqualTo("now");
        assertNoTimerLeft(ex);
        assertThat(ex.stats().attempts()).isEqualTo(1);
    }

    @Test
    void should_grow_delay_linearly_when_policy_is_increasing() {
        HedgedExecutor ex = executor(config().maxAttempts(4)
                .delay(DelayPolicy.increasing(Duration.ofMillis(10), Duration.ofMillis(5), Duration.ofMillis(100))));
        Probe probe = new Probe(time);
        ex.executeAsync(probe);
        time.advance(Duration.ofMillis(200));
        // each delay counts from the previous attempt's start: 10, 15, 20
        assertThat(probe.startTimes).containsExactly(0L, 10 * MS, 25 * MS, 45 * MS);
        assertThat(eventsOf(NotHedged.class))
                .singleElement()
                .extracting(NotHedged::reason)
                .isEqualTo(NotHedged.Reason.MAX_ATTEMPTS);
    }

    @Test
    void should_grow_delay_geometrically_and_cap_when_policy_is_exponential() {
        HedgedExecutor ex = executor(config().maxAttempts(5)
                .delay(DelayPolicy.exponential(Duration.ofMillis(10), 2.0, Duration.ofMillis(30))));
        Probe probe = new Probe(time);
        ex.executeAsync(probe);
        time.advance(Duration.ofMillis(500));
        // 10, 20, 30 (capped from 40), 30 (capped from 80)
        assertThat(probe.startTimes).containsExactly(0L, 10 * MS, 30 * MS, 60 * MS, 90 * MS);
    }

    @Test
    void should_hedge_at_percentile_only_when_warmed_up() throws Exception {
        LatencyTracker tracker = LatencyTracker.builder().ticker(time).build();
        HedgedExecutor ex = executor(config().delay(DelayPolicy.percentile(0.9)
                        .minSamples(100)
                        .fallback(DelayPolicy.never()) // the estimate alone (WarmUpDelayTest)
                        .build())
                .latencyTracker(tracker));
        // an answer before: the first one measures the connection and is no sample (recordAnswer)
        tracker.recordAnswer(null, time.nanoTime(), time.nanoTime());
        // warm-up: 99 calls answered after 1..99 ms; none is hedged
        for (int i = 1; i <= 99; i++) {
            Probe p = new Probe(time);
            CompletableFuture<String> call = ex.executeAsync(p);
            p.succeedAfter(1, i, "v");
            time.advance(Duration.ofMillis(i));
            assertThat(call.get()).isEqualTo("v");
            assertThat(p.attempts()).isEqualTo(1);
        }
        assertThat(eventsOf(NotHedged.class))
                .allMatch(n -> n.reason() == NotHedged.Reason.POLICY_DECLINED)
                .hasSize(99);
        Probe p = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(p);
        p.succeedAfter(1, 100, "v");
        time.advance(Duration.ofMillis(100));
        call.get();
        // 100 samples of 1..100 ms: p90 is 90 ms (within histogram precision), so now a hedge waits ~90 ms
        time.advance(Duration.ofSeconds(2)); // let the tracker refresh
        long delay = ex.currentDelayNanos();
        assertThat(delay).isBetween(88 * MS, 92 * MS);
        Probe slow = new Probe(time);
        long start = time.nanoTime();
        ex.executeAsync(slow);
        time.advanceNanos(delay - 1);
        assertThat(slow.attempts()).isEqualTo(1);
        time.advanceNanos(1);
        assertThat(slow.attempts()).isEqualTo(2);
        assertThat(slow.startTimes.get(1) - start).isEqualTo(delay);
    }

    @Test
    void should_wait_for_five_samples_above_the_percentile_when_min_samples_is_fewer() {
        LatencyTracker tracker = LatencyTracker.builder().ticker(time).build();
        HedgedExecutor ex = executor(config().delay(DelayPolicy.percentile(0.99)
                        .minSamples(100)
                        .fallback(DelayPolicy.never()) // the estimate alone (WarmUpDelayTest)
                        .build())
                .latencyTracker(tracker));
        // p99 needs 5 / (1 - 0.99) = 500 samples: 100 (minSamples) cannot tell it from the largest
        for (int i = 1; i <= 499; i++) {
            tracker.record(i * MS);
        }
        time.advance(Duration.ofSeconds(1));
        assertThat(tracker.sampleCount()).isEqualTo(499);
        assertThat(ex.currentDelayNanos()).isEqualTo(DelayPolicy.NO_HEDGE);
        tracker.record(500 * MS);
        time.advance(Duration.ofSeconds(1));
        assertThat(ex.currentDelayNanos()).isBetween(493 * MS, 505 * MS);
    }

    @Test
    void should_hedge_within_the_first_two_hundred_calls_when_new_at_a_thousand_calls_per_second() {
        // the executor's own tracker shows samples every 62.5 ms while warming up, so hedging starts
        // after p95's 100 samples rather than at the first full refresh (1 s: 1,000 calls)
        HedgedExecutor ex = executor(config().delay(DelayPolicy.percentile(0.95)
                .fallback(DelayPolicy.never()) // the estimate alone (WarmUpDelayTest)
                .build()));
        int firstHedged = -1;
        for (int i = 0; i < 1000 && firstHedged < 0; i++) {
            long primaryMs = i % 25 == 0 ? 50 : 1; // one primary in 25 takes 50 ms, hedges 1 ms
            ex.executeAsync(ctx -> {
                CompletableFuture<String> f = new CompletableFuture<>();
                var task = time.schedule(() -> f.complete("v"), (ctx.isHedge() ? 1 : primaryMs) * MS);
                ctx.onCancel(task::cancel);
                return f;
            });
            time.advance(Duration.ofMillis(1));
            if (ex.stats().hedgesSent() > 0) {
                firstHedged = i;
            }
        }
        assertThat(firstHedged).isBetween(100, 200);
    }

    @Test
    void should_win_with_first_success_when_an_earlier_attempt_failed() throws Exception {
        HedgedExecutor ex = executor(config().maxAttempts(3).delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(10));
        // the hedge fails first, while the primary is still running: the call must wait
        probe.attempt(2).completeExceptionally(new IllegalStateException("replica 2 down"));
        // a retryable failure starts the next attempt at once
        assertThat(probe.attempts()).isEqualTo(3);
        assertThat(eventsOf(HedgeSent.class))
                .extracting(HedgeSent::reason)
                .containsExactly(HedgeSent.Reason.DELAY_ELAPSED, HedgeSent.Reason.PREVIOUS_FAILED);
        assertThat(call).isNotDone();
        probe.attempt(1).complete("primary");
        assertThat(call.get()).isEqualTo("primary");
        assertThat(probe.attempt(3)).isCancelled();
    }

    @Test
    void should_retry_at_once_when_primary_fails_retryably() throws Exception {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofSeconds(1))));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(3));
        probe.attempt(1).completeExceptionally(new java.io.IOException("connection reset"));
        assertThat(probe.attempts()).isEqualTo(2);
        assertThat(probe.startTimes.get(1)).isEqualTo(3 * MS);
        probe.attempt(2).complete("ok");
        assertThat(call.get()).isEqualTo("ok");
        assertNoTimerLeft(ex);
    }

    @Test
    void should_end_at_once_and_cancel_others_when_failure_is_fatal() {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .errorClassifier(ErrorClassifier.fatalOn(IllegalArgumentException.class)));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(10));
        probe.attempt(2).completeExceptionally(new IllegalArgumentException("bad request"));
        assertThat(call).isCompletedExceptionally();
        assertThatThrownBy(call::get).hasCauseInstanceOf(IllegalArgumentException.class);
        assertThat(probe.attempt(1)).isCancelled();
        assertNoTimerLeft(ex);
    }

    @Test
    void should_fail_with_primary_error_unchanged_and_others_in_the_trace_when_every_attempt_failed() {
        HedgedExecutor ex = executor(config().maxAttempts(3).delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(20));
        assertThat(probe.attempts()).isEqualTo(3);
        probe.attempt(3).completeExceptionally(new RuntimeException("third"));
        probe.attempt(2).completeExceptionally(new RuntimeException("second"));
        assertThat(call).isNotDone();
        RuntimeException primary = new RuntimeException("primary");
        probe.attempt(1).completeExceptionally(primary);
        assertThatThrownBy(call::get)
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isSameAs(primary);
        // an attempt's exception may be a shared instance: it is never mutated
        assertThat(primary.getSuppressed()).isEmpty();
        assertThat(eventsOf(CallCompleted.class).get(0).attempts())
                .extracting(a -> a.errorType())
                .containsExactly(
                        RuntimeException.class.getName(),
                        RuntimeException.class.getName(),
                        RuntimeException.class.getName());
        assertThat(ex.stats().failures()).isEqualTo(1);
    }

    @Test
    void should_cancel_every_attempt_and_timer_when_caller_cancels() {
        HedgedExecutor ex = executor(config().maxAttempts(3).delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(10));
        assertThat(call.cancel(true)).isTrue();
        assertThat(probe.attempt(1)).isCancelled();
        assertThat(probe.attempt(2)).isCancelled();
        assertThat(probe.hooksRun).hasValue(2);
        assertNoTimerLeft(ex);
        time.advance(Duration.ofSeconds(1));
        assertThat(probe.attempts()).isEqualTo(2);
        assertThat(eventsOf(CallCompleted.class))
                .singleElement()
                .extracting(CallCompleted::outcome)
                .isEqualTo(CallCompleted.CallOutcome.CANCELLED);
        assertThat(ex.stats().pendingAttempts()).isZero();
    }

    @Test
    void should_cancel_attempts_when_caller_completes_future_itself() {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        // as completeOnTimeout or a caller-side fallback would
        assertThat(call.complete("fallback")).isTrue();
        assertThat(call.join()).isEqualTo("fallback");
        assertThat(probe.attempt(1)).isCancelled();
        assertNoTimerLeft(ex);
    }

    @Test
    void should_fail_with_deadline_and_cancel_everything_when_deadline_passes() {
        HedgedExecutor ex = executor(config().maxAttempts(3)
                .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .deadline(Duration.ofMillis(15)));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(15));
        assertThatThrownBy(call::get).cause().isInstanceOf(DeadlineExceededException.class);
        assertThat(probe.futures).allMatch(CompletableFuture::isCancelled).hasSize(2);
        assertNoTimerLeft(ex);
        assertThat(ex.stats().deadlineExceeded()).isEqualTo(1);
    }

    @Test
    void should_use_per_call_deadline_when_call_sets_one() {
        HedgedExecutor ex = executor(config().deadline(Duration.ofSeconds(10)));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(
                CallOptions.builder().deadline(Duration.ofMillis(5)).build(), probe);
        time.advance(Duration.ofMillis(5));
        assertThat(call).isCompletedExceptionally();
    }

    @Test
    void should_run_exactly_once_when_call_is_not_idempotent() {
        HedgedExecutor ex =
                executor(config().idempotentByDefault(false).delay(DelayPolicy.fixed(Duration.ofMillis(1))));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(50));
        assertThat(probe.attempts()).isEqualTo(1);
        probe.attempt(1).completeExceptionally(new java.io.IOException("reset"));
        // not even a failure is retried
        assertThat(probe.attempts()).isEqualTo(1);
        assertThat(call).isCompletedExceptionally();
        assertThat(eventsOf(NotHedged.class))
                .singleElement()
                .extracting(NotHedged::reason)
                .isEqualTo(NotHedged.Reason.NON_IDEMPOTENT);
        assertThat(ex.stats().notHedgedNonIdempotent()).isEqualTo(1);
    }

    @Test
    void should_run_once_when_call_says_non_idempotent_over_executor_default() {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(1))));
        Probe probe = new Probe(time);
        ex.executeAsync(CallOptions.nonIdempotent(), probe);
        time.advance(Duration.ofMillis(50));
        assertThat(probe.attempts()).isEqualTo(1);
    }

    @Test
    void should_treat_as_attempt_outcomes_when_function_throws_returns_null_or_completed() throws Exception {
        HedgedExecutor ex = executor(config().maxAttempts(3).delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            switch (ctx.attemptNumber()) {
                case 1:
                    throw new IllegalStateException("sync throw");
                case 2:
                    return null;
                default:
                    return CompletableFuture.completedFuture("third");
            }
        });
        assertThat(call.get()).isEqualTo("third");
        assertThat(ex.stats().attempts()).isEqualTo(3);
        assertNoTimerLeft(ex);
    }

    @Test
    void should_complete_call_when_a_listener_throws() throws Exception {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        ex.events().subscribe(e -> {
            throw new IllegalStateException("listener bug");
        });
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(10));
        probe.attempt(2).complete("b");
        assertThat(call.get()).isEqualTo("b");
    }

    /** Takes only CallCompleted, of calls of at least 50 ms; remembers what it was asked. */
    private static final class SlowCallsOnly implements HedgeEventListener {
        final List<HedgeEvent> seen = new CopyOnWriteArrayList<>();
        final List<Long> asked = new CopyOnWriteArrayList<>();

        @Override
        public Set<Class<? extends HedgeEvent>> eventTypes() {
            return Set.of(CallCompleted.class);
        }

        @Override
        public boolean wantsCallCompleted(CallCompleted.CallOutcome outcome, long totalNanos) {
            asked.add(totalNanos);
            return totalNanos >= 50 * MS;
        }

        @Override
        public void onEvent(HedgeEvent event) {
            seen.add(event);
        }
    }

    @Test
    void should_build_no_event_for_a_call_when_the_only_listener_declines_it() throws Exception {
        HedgedExecutor ex = HedgedExecutor.of(
                "test", config().delay(DelayPolicy.fixed(Duration.ofMillis(10))).build());
        SlowCallsOnly listener = new SlowCallsOnly();
        ex.events().subscribe(listener);

        for (int i = 0; i < 3; i++) {
            ex.executeAsync(ctx -> CompletableFuture.completedFuture("fast")).get();
        }
        Probe probe = new Probe(time);
        CompletableFuture<String> fastHedged = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(10));
        probe.attempt(2).complete("hedge");
        assertThat(fastHedged.get()).isEqualTo("hedge");

        // asked with each call's duration before anything was built, and declined every time
        assertThat(listener.asked).containsExactly(0L, 0L, 0L, 10 * MS);
        assertThat(listener.seen).isEmpty();
        assertThat(ex.events().hasListeners(AttemptStarted.class)).isFalse();
    }

    @Test
    void should_deliver_only_the_asked_type_with_its_trace_when_a_hedged_call_is_slow() throws Exception {
        HedgedExecutor ex = HedgedExecutor.of(
                "test", config().delay(DelayPolicy.fixed(Duration.ofMillis(10))).build());
        SlowCallsOnly listener = new SlowCallsOnly();
        ex.events().subscribe(listener);
        ex.executeAsync(ctx -> CompletableFuture.completedFuture("fast")).get();

        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(10));
        probe.contexts.get(1).reportTarget("b");
        probe.succeedAfter(2, 50, "hedge");
        time.advance(Duration.ofMillis(50));
        assertThat(call.get()).isEqualTo("hedge");

        // no AttemptStarted, HedgeSent or HedgeWon, though the call hedged and the hedge won
        CallCompleted done = (CallCompleted) assertThat(listener.seen)
                .singleElement()
                .isInstanceOf(CallCompleted.class)
                .actual();
        // the declined call built no event, so it took no call id either
        assertThat(done.callId()).isEqualTo(1);
        assertThat(done.totalNanos()).isEqualTo(60 * MS);
        assertThat(done.winningAttempt()).isEqualTo(2);
        assertThat(done.attempts())
                .containsExactly(
                        new AttemptRecord(1, null, 0, 60 * MS, AttemptRecord.AttemptOutcome.CANCELLED, null),
                        new AttemptRecord(2, "b", 10 * MS, 50 * MS, AttemptRecord.AttemptOutcome.WON, null));
    }

    @Test
    void should_stop_delivering_events_when_subscription_closed() {
        HedgedExecutor ex = HedgedExecutor.of("test", config().build());
        List<HedgeEvent> seen = new CopyOnWriteArrayList<>();
        Subscription s = ex.events().subscribe(seen::add);
        ex.executeAsync(ctx -> CompletableFuture.completedFuture("x"));
        int n = seen.size();
        s.close();
        ex.executeAsync(ctx -> CompletableFuture.completedFuture("x"));
        assertThat(seen).hasSize(n);
        assertThat(ex.events().hasListeners()).isFalse();
    }

    @Test
    void should_hedge_a_call_that_started_before_any_latency_was_known_when_the_first_answers_arrive() {
        // a new executor with the default delay: no hedge before the first latency sample
        HedgedExecutor ex = executor(config().maxExtraLoad(0.05));
        Probe stuck = new Probe(time);
        CompletableFuture<String> first = ex.executeAsync(stuck); // its replica stalls: 500 ms
        stuck.succeedAfter(1, 500, "late");
        // other calls answer in 2 ms; a replica's first answer measures its connection, so the
        // first sample is the second call's answer
        for (int i = 0; i < 3; i++) {
            Probe p = new Probe(time);
            CompletableFuture<String> call = ex.executeAsync(p);
            p.succeedAfter(1, 2, "fast");
            time.advance(Duration.ofMillis(5));
            assertThat(call).isCompletedWithValue("fast");
        }
        // once a delay exists, the stuck call, past it already, is hedged at once
        assertThat(stuck.attempts()).isEqualTo(2);
        assertThat(stuck.startTimes.get(1)).isLessThanOrEqualTo(15 * MS);
        stuck.succeedAfter(2, 2, "hedge");
        time.advance(Duration.ofMillis(5));
        assertThat(first).isCompletedWithValue("hedge");
        assertThat(stuck.attempt(1)).isCancelled();
        assertNoTimerLeft(ex);
    }

    @Test
    void should_report_the_delay_a_call_is_given_when_the_budget_raises_it() {
        HedgedExecutor ex = executor(HedgeConfig.builder()
                .ticker(time)
                .scheduler(time)
                .idempotentByDefault(true)
                .maxExtraLoad(0.05));
        // a and b answer after an exponential latency, mean 10 ms; c the same, but 10% of its calls
        // stall for 1 s: the targets' own p96 asks for more hedges than 5% pays for, so the delay
        // a call is given is raised above it
        LatencyTracker tracker = ex.latencyTracker();
        TrackerFeeds.oneOfThreeStalls(tracker, time);
        long reported = ex.currentDelayNanos();
        assertThat(reported).isGreaterThan(tracker.consensusTargetPercentileNanos(0.96, 125) * 5 / 4);

        Probe p = new Probe(time);
        ex.executeAsync(p);
        time.advance(Duration.ofMillis(500));

        assertThat(eventsOf(HedgeSent.class))
                .singleElement()
                .extracting(HedgeSent::delayNanos)
                .isEqualTo(reported);
        p.succeedAfter(2, 1, "hedge");
        time.advance(Duration.ofMillis(5));
        assertNoTimerLeft(ex);
    }

    @Test
    void should_publish_policy_declined_and_keep_nothing_when_a_call_ends_before_any_latency_was_known() {
        HedgedExecutor ex = executor(config().maxExtraLoad(0.05));
        Probe p = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(p);
        p.succeedAfter(1, 3, "only");
        time.advance(Duration.ofMillis(3));
        assertThat(call).isCompletedWithValue("only");
        assertThat(p.attempts()).isEqualTo(1);
        assertThat(eventsOf(NotHedged.class))
                .singleElement()
                .extracting(NotHedged::reason)
                .isEqualTo(NotHedged.Reason.POLICY_DECLINED);
        // later answers find no call waiting: nothing else is started, nothing is left armed
        for (int i = 0; i < 5; i++) {
            Probe q = new Probe(time);
            ex.executeAsync(q);
            q.succeedAfter(1, 2, "v");
            time.advance(Duration.ofMillis(3));
        }
        assertThat(p.attempts()).isEqualTo(1);
        assertThat(ex.stats().inFlightCalls()).isZero();
        assertNoTimerLeft(ex);
    }

    @Test
    void should_not_hedge_when_budget_is_exhausted() {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .budget(HedgeBudget.builder().ratio(0.1).ticker(time).build()));
        int hedged = 0;
        for (int i = 0; i < 100; i++) {
            Probe probe = new Probe(time);
            CompletableFuture<String> call = ex.executeAsync(probe);
            time.advance(Duration.ofMillis(10));
            hedged += probe.attempts() - 1;
            probe.attempt(1).complete("a");
            assertThat(call).isDone();
        }
        assertThat(hedged).isBetween(1, 10);
        assertThat(eventsOf(BudgetExhausted.class)).hasSize(100 - hedged);
        assertThat(ex.stats().budgetDenied()).isEqualTo(100 - hedged);
    }

    @Test
    void should_give_each_token_to_the_hedge_that_has_waited_longest_when_several_wait() throws Exception {
        // a quarter token per primary; every hedge comes due with the bucket empty and waits in line
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .budget(HedgeBudget.builder().ratio(0.25).ticker(time).build()));
        Probe a = new Probe(time);
        Probe b = new Probe(time);
        Probe c = new Probe(time);
        Probe d = new Probe(time);
        CompletableFuture<String> callA = ex.executeAsync(a); // t=0, 0.25 token
        time.advanceTo(1 * MS);
        CompletableFuture<String> callB = ex.executeAsync(b); // 0.5
        time.advanceTo(2 * MS);
        CompletableFuture<String> callC = ex.executeAsync(c); // 0.75
        time.advanceTo(12 * MS); // all three came due without a token: they wait, A first
        assertThat(a.attempts() + b.attempts() + c.attempts()).isEqualTo(3);

        time.advanceTo(13 * MS);
        fastCall(ex); // its deposit completes a token: the oldest waiter takes it at once
        assertThat(a.startTimes).containsExactly(0L, 13 * MS);
        for (long t = 14; t <= 17; t++) {
            time.advanceTo(t * MS);
            fastCall(ex);
        }
        assertThat(b.startTimes).containsExactly(1 * MS, 17 * MS);
        assertThat(c.attempts()).isEqualTo(1);

        time.advanceTo(18 * MS);
        CompletableFuture<String> callD = ex.executeAsync(d); // 0.25
        time.advanceTo(19 * MS);
        fastCall(ex);
        time.advanceTo(20 * MS);
        fastCall(ex); // 0.75
        time.advanceTo(29 * MS); // D came due at 28 ms with C waiting: D goes behind C
        time.advanceTo(30 * MS);
        fastCall(ex); // a whole token: C's, though D's timer fired more recently
        assertThat(c.startTimes).containsExactly(2 * MS, 30 * MS);
        assertThat(d.attempts()).isEqualTo(1);
        for (long t = 31; t <= 34; t++) {
            time.advanceTo(t * MS);
            fastCall(ex);
        }
        assertThat(d.startTimes).containsExactly(18 * MS, 34 * MS);

        for (Probe p : List.of(a, b, c, d)) {
            p.attempt(2).complete("hedge");
        }
        for (CompletableFuture<String> call : List.of(callA, callB, callC, callD)) {
            assertThat(call.get()).isEqualTo("hedge");
        }
        assertThat(eventsOf(HedgeSent.class))
                .extracting(HedgeSent::reason, HedgeSent::delayNanos)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(HedgeSent.Reason.BUDGET_DEFERRED, 13 * MS),
                        org.assertj.core.groups.Tuple.tuple(HedgeSent.Reason.BUDGET_DEFERRED, 16 * MS),
                        org.assertj.core.groups.Tuple.tuple(HedgeSent.Reason.BUDGET_DEFERRED, 28 * MS),
                        org.assertj.core.groups.Tuple.tuple(HedgeSent.Reason.BUDGET_DEFERRED, 16 * MS));
        assertThat(eventsOf(BudgetExhausted.class)).isEmpty(); // each waited, none was refused for good
        assertThat(ex.stats().budgetDenied()).isZero();
        assertNoTimerLeft(ex);
    }

    @Test
    void should_send_a_deferred_hedge_when_a_primary_brings_the_token_after_a_long_wait() throws Exception {
        // a primary stuck for a second: the token the next primary completes goes to it at once,
        // however rarely its own timer asks by then
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .budget(HedgeBudget.builder().ratio(0.5).ticker(time).build()));
        Probe stuck = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(stuck); // balance 0.5: no token
        time.advanceTo(1_000 * MS);
        assertThat(stuck.attempts()).isEqualTo(1);
        fastCall(ex); // balance 1.0
        assertThat(stuck.startTimes).containsExactly(0L, 1_000 * MS);

        stuck.attempt(2).complete("hedge");
        assertThat(call.get()).isEqualTo("hedge");
        assertNoTimerLeft(ex);
    }

    @Test
    void should_ask_a_shared_budget_again_within_an_eighth_of_its_wait_when_a_deferred_hedge_has_waited_long()
            throws Exception {
        // the token comes from another executor's primary, which does not drain this executor's
        // queue: the waiting call's own checks find it, thinned out to one every eighth of its
        // wait (about 979 ms, then 1,101 ms), not one every half (864 ms, then 1,297 ms), so a token
        // that comes back at 1 s is taken within 125 ms
        HedgeBudget shared = HedgeBudget.builder().ratio(0.5).ticker(time).build();
        HedgedExecutor ex = executor(
                config().delay(DelayPolicy.fixed(Duration.ofMillis(10))).budget(shared));
        HedgedExecutor other = executor(
                config().delay(DelayPolicy.fixed(Duration.ofMillis(10))).budget(shared));
        Probe stuck = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(stuck); // balance 0.5: no token
        time.advanceTo(1_000 * MS);
        assertThat(stuck.attempts()).isEqualTo(1);
        fastCall(other); // balance 1.0, asks for nothing
        assertThat(stuck.attempts()).isEqualTo(1);
        time.advanceTo(1_126 * MS);
        assertThat(stuck.attempts()).isEqualTo(2);
        assertThat(stuck.startTimes.get(1)).isBetween(1_000 * MS, 1_125 * MS);

        stuck.attempt(2).complete("hedge");
        assertThat(call.get()).isEqualTo("hedge");
        assertThat(ex.stats().pendingTimers()).isZero();
    }

    @Test
    void should_send_a_denied_hedge_later_when_a_token_comes_back_while_the_primary_still_runs() throws Exception {
        // 0.5 token per primary: two primaries pay for one hedge; nothing saved up at the start
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .budget(HedgeBudget.builder().ratio(0.5).ticker(time).build()));
        Probe first = new Probe(time);
        CompletableFuture<String> call1 = ex.executeAsync(first); // t=0, balance 0.5
        time.advance(Duration.ofMillis(10)); // delay elapsed, no token: deferred
        assertThat(first.attempts()).isEqualTo(1);
        time.advance(Duration.ofMillis(2));
        Probe second = new Probe(time);
        CompletableFuture<String> call2 = ex.executeAsync(second); // t=12, balance 1.0: call 1 takes it
        assertThat(first.attempts()).isEqualTo(2);
        assertThat(first.startTimes.get(1)).isEqualTo(12 * MS);

        // call 2: denied at 22 and waits; two more primaries at 40 ms bring one token, which it takes
        time.advanceTo(40 * MS);
        assertThat(second.attempts()).isEqualTo(1);
        Probe third = new Probe(time);
        Probe fourth = new Probe(time);
        CompletableFuture<String> call3 = ex.executeAsync(third);
        CompletableFuture<String> call4 = ex.executeAsync(fourth);
        assertThat(second.attempts()).isEqualTo(2);
        assertThat(second.startTimes.get(1)).isEqualTo(40 * MS);

        first.attempt(2).complete("hedge");
        second.attempt(2).complete("hedge");
        assertThat(call1.get()).isEqualTo("hedge");
        assertThat(call2.get()).isEqualTo("hedge");
        // calls 3 and 4 found no token at 50 ms and their primaries answer while they wait
        time.advanceTo(60 * MS);
        third.attempt(1).complete("a");
        fourth.attempt(1).complete("a");
        assertThat(third.attempts()).isEqualTo(1);
        assertThat(fourth.attempts()).isEqualTo(1);

        assertThat(eventsOf(HedgeSent.class))
                .extracting(HedgeSent::reason, HedgeSent::delayNanos)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(HedgeSent.Reason.BUDGET_DEFERRED, 12 * MS),
                        org.assertj.core.groups.Tuple.tuple(HedgeSent.Reason.BUDGET_DEFERRED, 28 * MS));
        // every call found no token at its delay once; only calls 3 and 4 never got one
        assertThat(eventsOf(BudgetExhausted.class))
                .extracting(BudgetExhausted::attemptNumber)
                .containsExactly(2, 2);
        assertThat(ex.stats().budgetDenied()).isEqualTo(2);
        // only the two calls whose hedge never went out are "not hedged" for want of a token
        assertThat(eventsOf(NotHedged.class))
                .filteredOn(n -> n.reason() == NotHedged.Reason.BUDGET_EXHAUSTED)
                .hasSize(2);
        assertThat(call3).isCompletedWithValue("a");
        assertThat(call4).isCompletedWithValue("a");
        assertNoTimerLeft(ex);
    }

    @Test
    void should_start_a_deferred_hedge_in_its_own_callers_context_when_another_callers_primary_brings_the_token()
            throws Exception {
        ThreadLocal<String> requestId = new ThreadLocal<>();
        ContextPropagator<String> propagator = ThreadLocalPropagator.of(requestId);
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .budget(HedgeBudget.builder().ratio(0.5).ticker(time).build())
                .contextPropagators(List.of(propagator)));
        Probe waiting = new Probe(time);
        java.util.Map<Integer, String> seen = new java.util.concurrent.ConcurrentHashMap<>();
        requestId.set("waiting caller");
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            seen.put(ctx.attemptNumber(), String.valueOf(requestId.get()));
            return waiting.start(ctx);
        });
        requestId.remove();
        time.advanceTo(10 * MS); // no token: the hedge waits

        requestId.set("other caller");
        fastCall(ex); // its deposit completes a token
        // the hedge is not started here, inside this caller's context, which stays as it was
        assertThat(requestId.get()).isEqualTo("other caller");
        assertThat(waiting.attempts()).isEqualTo(1);
        requestId.remove();

        time.advanceTo(10 * MS); // the drain queued on the timers, at once
        assertThat(waiting.startTimes).containsExactly(0L, 10 * MS);
        assertThat(seen).containsEntry(1, "waiting caller").containsEntry(2, "waiting caller");
        waiting.attempt(2).complete("hedge");
        assertThat(call.get()).isEqualTo("hedge");
        assertNoTimerLeft(ex);
    }

    /** A call whose primary answers at once: it only deposits its share of a token. */
    private static void fastCall(HedgedExecutor ex) {
        assertThat(ex.executeAsync(ctx -> CompletableFuture.completedFuture("x")))
                .isCompletedWithValue("x");
    }

    @Test
    void should_end_with_the_primary_failure_when_the_budget_denies_a_retry_and_nothing_else_runs() throws Exception {
        HedgedExecutor ex = executor(config().delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .budget(HedgeBudget.builder().ratio(0.5).ticker(time).build()));
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(probe);
        time.advance(Duration.ofMillis(10)); // denied and deferred: the primary still runs
        IllegalStateException boom = new IllegalStateException("replica down");
        probe.attempt(1).completeExceptionally(boom); // retry wanted, no token, nothing in flight
        assertThat(call).isCompletedExceptionally();
        assertThat(probe.attempts()).isEqualTo(1);
        assertThatThrownBy(call::get).hasCause(boom);
        assertNoTimerLeft(ex);
    }

    @Test
    void should_show_tried_targets_when_later_attempts_start() {
        HedgedExecutor ex = executor(config().maxAttempts(3).delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        Probe probe = new Probe(time);
        ex.executeAsync(ctx -> {
            ctx.reportTarget("replica-" + ctx.attemptNumber());
            return probe.start(ctx);
        });
        time.advance(Duration.ofMillis(20));
        assertThat(probe.contexts.get(0).triedTargets()).isEmpty();
        assertThat(probe.contexts.get(1).triedTargets()).containsExactly("replica-1");
        assertThat(probe.contexts.get(2).triedTargets()).containsExactly("replica-1", "replica-2");
    }

    @Test
    void should_honour_pushback_and_stop_when_server_says_so() {
        HedgedExecutor ex = executor(config().maxAttempts(3).delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        Probe probe = new Probe(time);
        ex.executeAsync(ctx -> {
            CompletableFuture<String> f = probe.start(ctx);
            if (ctx.attemptNumber() == 1) {
                ctx.pushback(Duration.ofMillis(30));
            } else {
                ctx.stopFurtherAttempts();
            }
            return f;
        });
        time.advance(Duration.ofMillis(29));
        assertThat(probe.attempts()).isEqualTo(1);
        time.advance(Duration.ofMillis(1));
        assertThat(probe.attempts()).isEqualTo(2);
        time.advance(Duration.ofSeconds(1));
        assertThat(probe.attempts()).isEqualTo(2);
        assertNoTimerLeft(ex);
    }

    @Test
    void
            should_report_the_adapters_reason_and_refuse_one_only_the_executor_decides_when_an_attempt_stops_further_attempts() {
        HedgedExecutor ex = executor(config().maxAttempts(3).delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        List<NotHedged> notHedged = new CopyOnWriteArrayList<>();
        ex.events().subscribe(NotHedged.class, notHedged::add);
        List<IllegalArgumentException> refused = new CopyOnWriteArrayList<>();
        Probe probe = new Probe(time);
        ex.executeAsync(ctx -> {
            CompletableFuture<String> f = probe.start(ctx);
            try {
                ctx.stopFurtherAttempts(NotHedged.Reason.BUDGET_EXHAUSTED); // the executor's to decide
            } catch (IllegalArgumentException e) {
                refused.add(e);
            }
            ctx.stopFurtherAttempts(NotHedged.Reason.NO_UNTRIED_TARGET);
            return f;
        });
        time.advance(Duration.ofSeconds(1));
        assertThat(probe.attempts()).isEqualTo(1);
        assertThat(refused)
                .singleElement()
                .extracting(Throwable::getMessage)
                .isEqualTo("reason must be PUSHBACK, REQUEST_TOO_LARGE, NO_UNTRIED_TARGET or CLIENT_CLOSING,"
                        + " was BUDGET_EXHAUSTED");
        assertThat(notHedged).extracting(NotHedged::reason).containsExactly(NotHedged.Reason.NO_UNTRIED_TARGET);
        assertNoTimerLeft(ex);
    }

    @Test
    void should_record_own_latency_of_each_attempt_when_loser_is_cancelled() throws Exception {
        LatencyTracker tracker = LatencyTracker.builder().ticker(time).build();
        HedgedExecutor ex = executor(config().latencyTracker(tracker).delay(DelayPolicy.fixed(Duration.ofMillis(10))));
        // r2 answered before: its first answer measures its connection and is no sample (recordAnswer)
        tracker.recordAnswer("r2", time.nanoTime(), time.nanoTime());
        Probe probe = new Probe(time);
        CompletableFuture<String> call = ex.executeAsync(ctx -> {
            ctx.reportTarget("r" + ctx.attemptNumber());
            return probe.start(ctx);
        });
        time.advance(Duration.ofMillis(10));
        probe.succeedAfter(2, 5, "b");
        time.advance(Duration.ofMillis(5));
        call.get();
        time.advance(Duration.ofSeconds(2));
        // the winner took 5 ms; the loser was cancelled after 15 ms, so its latency is only known to
        // exceed 15 ms (a censored sample, not a latency); the call's 15 ms end-to-end is not a sample
        assertThat(tracker.sampleCount()).isEqualTo(2);
        assertThat(tracker.sampleCount("r1")).isEqualTo(1);
        assertThat(tracker.percentileNanos(0.5, "r1")).isEqualTo(-1); // nothing observed there yet
        assertThat(tracker.summary("r2").maxNanos()).isBetween(4 * MS, 6 * MS);
        // r1 completed nothing in the window, so the pooled estimate leaves its censored sample out
        assertThat(tracker.percentileNanos(0.99)).isBetween(4 * MS, 6 * MS);
    }

    @Test
    void should_throw_cancellation_to_caller_when_cancelled() {
        HedgedExecutor ex = executor(config());
        CompletableFuture<String> call = ex.executeAsync(new Probe(time));
        call.cancel(false);
        assertThatThrownBy(call::join).isInstanceOf(CancellationException.class);
    }

    @Test
    void should_answer_unhedged_when_scheduler_refuses_timers() throws Exception {
        io.github.hedge.core.spi.ClosableHedgeScheduler closed = io.github.hedge.core.spi.Schedulers.threadPool();
        closed.close();
        HedgedExecutor ex = executor(config().scheduler(closed).delay(DelayPolicy.fixed(Duration.ofMillis(1))));
        CompletableFuture<String> slow = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(ctx -> slow);
        assertThat(eventsOf(NotHedged.class))
                .singleElement()
                .extracting(NotHedged::reason)
                .isEqualTo(NotHedged.Reason.SCHEDULER_REJECTED);
        slow.complete("primary");
        assertThat(call.get()).isEqualTo("primary");
    }

    @Test
    void should_fail_call_and_cancel_primary_when_scheduler_refuses_deadline() {
        io.github.hedge.core.spi.ClosableHedgeScheduler closed = io.github.hedge.core.spi.Schedulers.threadPool();
        closed.close();
        HedgedExecutor ex = executor(config().scheduler(closed).deadline(Duration.ofSeconds(1)));
        CompletableFuture<String> slow = new CompletableFuture<>();
        CompletableFuture<String> call = ex.executeAsync(ctx -> slow);
        assertThatThrownBy(call::get).cause().isInstanceOf(java.util.concurrent.RejectedExecutionException.class);
        assertThat(slow).isCancelled();
        assertThat(ex.stats().inFlightCalls()).isZero();
        assertThat(ex.stats().pendingAttempts()).isZero();
    }

    @Test
    void should_fail_with_range_when_duration_beyond_a_year() {
        assertThatThrownBy(() -> DelayPolicy.fixed(Duration.ofDays(400)))
                .hasMessage("delay must be <= PT8760H, was PT9600H");
    }
}

package io.github.hedge.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DeadlineExceededException;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;

/**
 * {@link HedgedMono} and {@link HedgeOperator} in virtual time: the sources are Monos whose
 * subscriptions and cancellations are counted, the hedge timers run on a {@link
 * VirtualTimeScheduler}.
 */
class HedgedMonoTest {
    private static final Duration DELAY = Duration.ofMillis(20);

    private VirtualTimeScheduler time;
    private HedgedExecutor executor;
    /** one sink per attempt subscribed, in subscription order */
    private final List<Sinks.One<String>> attempts = new ArrayList<>();

    private final AtomicInteger subscribed = new AtomicInteger();
    private final AtomicInteger cancelled = new AtomicInteger();

    @BeforeEach
    void setUp() {
        time = new VirtualTimeScheduler();
        executor = HedgedExecutor.of(
                "virtual",
                HedgeConfig.builder()
                        .scheduler(time)
                        .ticker(time)
                        .delay(DelayPolicy.fixed(DELAY))
                        .maxAttempts(3)
                        .budgetRatio(1.0)
                        .idempotentByDefault(true)
                        .build());
    }

    /** A source that subscribes anew each time: each subscription is an attempt with its own sink. */
    private Mono<String> source() {
        return Mono.defer(() -> {
            Sinks.One<String> sink = Sinks.one();
            attempts.add(sink);
            subscribed.incrementAndGet();
            return sink.asMono().doOnCancel(cancelled::incrementAndGet);
        });
    }

    @Test
    void should_subscribe_anew_and_cancel_the_losers_when_a_hedge_wins() {
        AtomicReference<String> result = new AtomicReference<>();
        source().transformDeferred(HedgeOperator.of(executor)).subscribe(result::set);
        time.advance(DELAY);
        time.advance(DELAY);
        assertThat(attempts).hasSize(3);

        attempts.get(1).tryEmitValue("second");

        assertThat(result).hasValue("second");
        assertThat(cancelled).hasValue(2); // the primary and the third attempt
        assertNothingLeft();
    }

    @Test
    void should_make_each_subscription_a_call_of_its_own_when_subscribed_twice() {
        Mono<String> hedged = source().transformDeferred(HedgeOperator.of(executor));
        List<String> results = new ArrayList<>();
        hedged.subscribe(results::add);
        hedged.subscribe(results::add);
        assertThat(attempts).hasSize(2);

        attempts.get(0).tryEmitValue("a");
        attempts.get(1).tryEmitValue("b");

        assertThat(results).containsExactly("a", "b");
        assertThat(executor.stats().calls()).isEqualTo(2);
        assertNothingLeft();
    }

    @Test
    void should_complete_empty_when_the_winning_attempt_completes_empty() {
        AtomicInteger values = new AtomicInteger();
        AtomicInteger completions = new AtomicInteger();
        source().transformDeferred(HedgeOperator.of(executor))
                .subscribe(v -> values.incrementAndGet(), e -> {}, completions::incrementAndGet);
        time.advance(DELAY);

        attempts.get(1).tryEmitEmpty();

        assertThat(values).hasValue(0);
        assertThat(completions).hasValue(1);
        assertThat(executor.stats().successes()).isEqualTo(1);
        assertThat(cancelled).hasValue(1);
        assertNothingLeft();
    }

    @Test
    void should_not_let_an_error_win_while_another_attempt_is_in_flight() {
        AtomicReference<Object> outcome = new AtomicReference<>();
        source().transformDeferred(HedgeOperator.of(executor)).subscribe(outcome::set, outcome::set);
        time.advance(DELAY);

        attempts.get(0).tryEmitError(new IOException("primary failed"));
        assertThat(outcome).hasValue(null);
        attempts.get(1).tryEmitValue("hedge");

        assertThat(outcome).hasValue("hedge");
        assertNothingLeft();
    }

    @Test
    void should_fail_with_the_primarys_error_unchanged_when_every_attempt_fails() {
        IOException primary = new IOException("primary failed");
        AtomicReference<Throwable> failure = new AtomicReference<>();
        source().transformDeferred(HedgeOperator.of(executor)).subscribe(v -> {}, failure::set);
        time.advance(DELAY);

        attempts.get(0).tryEmitError(primary);
        // a retryable failure starts the third attempt at once
        attempts.get(1).tryEmitError(new IOException("second failed"));
        attempts.get(2).tryEmitError(new IOException("third failed"));

        assertThat(failure.get()).isSameAs(primary);
        assertThat(primary.getSuppressed()).isEmpty();
        assertNothingLeft();
    }

    @Test
    void should_subscribe_once_when_the_call_is_not_idempotent() {
        AtomicReference<String> result = new AtomicReference<>();
        source().transformDeferred(HedgeOperator.of(executor, CallOptions.nonIdempotent()))
                .subscribe(result::set);
        time.advance(Duration.ofSeconds(10));

        attempts.get(0).tryEmitValue("only");

        assertThat(result).hasValue("only");
        assertThat(subscribed).hasValue(1);
        assertThat(executor.stats().notHedgedNonIdempotent()).isEqualTo(1);
        assertNothingLeft();
    }

    @Test
    void should_cancel_every_attempt_when_the_deadline_passes() {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        source().transformDeferred(HedgeOperator.of(
                        executor,
                        CallOptions.builder().deadline(Duration.ofMillis(100)).build()))
                .subscribe(v -> {}, failure::set);

        time.advance(Duration.ofMillis(100));

        assertThat(failure.get()).isInstanceOf(DeadlineExceededException.class);
        assertThat(subscribed).hasValue(3);
        assertThat(cancelled).hasValue(3);
        assertNothingLeft();
    }

    @Test
    void should_start_no_attempt_after_the_caller_disposed_when_a_hedge_was_due() {
        Disposable call = source().transformDeferred(HedgeOperator.of(executor)).subscribe();

        call.dispose();
        time.advance(Duration.ofSeconds(1));

        assertThat(subscribed).hasValue(1);
        assertThat(cancelled).hasValue(1);
        assertNothingLeft();
    }

    /** Subscribers of a source that ignores cancellation, as a racing one may: it emits after losing. */
    private final List<Subscriber<? super String>> stubborn = new ArrayList<>();

    private Mono<String> stubbornSource() {
        return Mono.fromDirect(subscriber -> {
            stubborn.add(subscriber);
            subscriber.onSubscribe(Operators.emptySubscription());
        });
    }

    @Test
    void should_hand_a_losers_late_value_to_the_discard_hook_when_a_hedge_already_won() {
        List<String> discarded = new ArrayList<>();
        AtomicReference<String> result = new AtomicReference<>();
        stubbornSource()
                .transformDeferred(HedgeOperator.of(executor))
                .doOnDiscard(String.class, discarded::add)
                .subscribe(result::set);
        time.advance(DELAY);

        stubborn.get(1).onNext("hedge");
        stubborn.get(0).onNext("late primary");

        assertThat(result).hasValue("hedge");
        assertThat(discarded).containsExactly("late primary");
    }

    @Test
    void should_hand_a_sampled_losers_value_to_the_discard_hook_when_it_finishes_after_the_hedge_won() {
        executor = HedgedExecutor.of(
                "sampling",
                HedgeConfig.from(executor.config()).loserSampling(1.0).build()); // beaten primaries run on
        List<String> discarded = new ArrayList<>();
        AtomicReference<String> result = new AtomicReference<>();
        source().transformDeferred(HedgeOperator.of(executor))
                .doOnDiscard(String.class, discarded::add)
                .subscribe(result::set);
        time.advance(DELAY);

        attempts.get(1).tryEmitValue("hedge");
        assertThat(cancelled).as("the beaten primary is left running").hasValue(0);
        attempts.get(0).tryEmitValue("late primary");

        assertThat(result).hasValue("hedge");
        assertThat(discarded).containsExactly("late primary");
    }

    @Test
    void should_hand_an_attempts_value_to_the_discard_hook_when_the_subscriber_cancelled_first() {
        List<String> discarded = new ArrayList<>();
        Disposable call = stubbornSource()
                .transformDeferred(HedgeOperator.of(executor))
                .doOnDiscard(String.class, discarded::add)
                .subscribe();

        call.dispose();
        stubborn.get(0).onNext("too late");

        assertThat(discarded).containsExactly("too late");
    }

    @Test
    void should_leave_no_subscription_timer_or_attempt_when_10000_random_calls_end() {
        Random random = new Random(38);
        AtomicInteger sourceSubscriptions = new AtomicInteger();
        AtomicInteger sourceEnds = new AtomicInteger(); // terminated or cancelled, counted at the source
        Mono<String> attempt = Mono.defer(() -> {
            int kind = random.nextInt(10);
            long delayNanos = Duration.ofMillis(1 + random.nextInt(80)).toNanos();
            return Mono.<String>create(sink -> {
                        ScheduledTask task = time.schedule(
                                () -> {
                                    if (kind < 6) {
                                        sink.success("value");
                                    } else if (kind < 7) {
                                        sink.success();
                                    } else if (kind < 9) {
                                        sink.error(new IOException("failed"));
                                    } // else: never answers; a deadline or the caller ends it
                                },
                                delayNanos);
                        sink.onDispose(task::cancel);
                    })
                    .doOnSubscribe(s -> sourceSubscriptions.incrementAndGet())
                    .doFinally(signal -> sourceEnds.incrementAndGet());
        });
        Mono<String> hedged = attempt.transformDeferred(HedgeOperator.of(
                executor, CallOptions.builder().deadline(Duration.ofMillis(300)).build()));
        int calls = 10_000;
        AtomicInteger settled = new AtomicInteger();
        AtomicInteger disposedFirst = new AtomicInteger();
        for (int i = 0; i < calls; i++) {
            boolean[] done = new boolean[1];
            Disposable d = hedged.subscribe(
                    v -> {},
                    e -> {
                        done[0] = true;
                        settled.incrementAndGet();
                    },
                    () -> {
                        done[0] = true;
                        settled.incrementAndGet();
                    });
            if (random.nextInt(5) == 0) {
                time.schedule(
                        () -> {
                            if (!done[0]) {
                                disposedFirst.incrementAndGet();
                            }
                            d.dispose();
                        },
                        Duration.ofMillis(random.nextInt(120)).toNanos());
            }
            time.advance(Duration.ofMillis(random.nextInt(3)));
        }
        time.runUntilIdle();

        assertThat(settled.get() + disposedFirst.get()).isEqualTo(calls);
        assertThat(sourceEnds.get()).isEqualTo(sourceSubscriptions.get());
        assertThat(sourceSubscriptions.get()).isGreaterThan(calls); // hedges and retries were sent
        HedgeStats stats = executor.stats();
        assertThat(stats.calls()).isEqualTo(calls);
        assertThat(stats.hedgesSent()).isPositive();
        assertThat(stats.cancelled()).isEqualTo(disposedFirst.get());
        assertNothingLeft();
    }

    private void assertNothingLeft() {
        HedgeStats stats = executor.stats();
        assertThat(stats.inFlightCalls()).as("calls in flight").isZero();
        assertThat(stats.pendingAttempts()).as("attempts pending").isZero();
        assertThat(stats.pendingTimers()).as("timers pending").isZero();
        for (Sinks.One<String> attempt : attempts) {
            assertThat(attempt.currentSubscriberCount())
                    .as("an attempt's subscription neither cancelled nor ended")
                    .isZero();
        }
        time.runUntilIdle();
        assertThat(time.pendingTasks()).as("scheduler tasks").isZero();
    }
}

package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Thousands of random calls in virtual time (random delays, outcomes, answer times, caller
 * cancellations, deadlines, fatal errors), each checked against the contract: the result is the
 * first success to arrive while the call was open, a failure is reported only when nothing else
 * could still answer, no attempt starts after the call ended or before its delay, every attempt
 * still running at the end is cancelled, and nothing stays pending.
 */
class RandomizedInvariantsTest {
    private static final long MS = 1_000_000L;

    /** What the test scripted for one attempt. */
    private static final class Plan {
        final int number;

        Plan(int number) {
            this.number = number;
        }

        long startNanos = -1;
        long answerAtNanos; // absolute, or -1: never answers
        boolean success;
        boolean fatal;
        CompletableFuture<String> future;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void should_honour_the_contract_when_calls_are_random(long seed) throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int round = 0; round < 500; round++) {
            VirtualTimeScheduler time = new VirtualTimeScheduler();
            int maxAttempts = 1 + rnd.nextInt(4);
            long delay = rnd.nextInt(20) * MS;
            boolean idempotent = rnd.nextInt(5) != 0;
            HedgeConfig.Builder b = HedgeConfig.builder()
                    .ticker(time)
                    .scheduler(time)
                    .maxAttempts(maxAttempts)
                    .idempotentByDefault(idempotent)
                    .budget(HedgeBudget.unlimited())
                    .delay(DelayPolicy.fixed(Duration.ofNanos(delay)))
                    .errorClassifier(ErrorClassifier.fatalOn(IllegalArgumentException.class));
            long deadline = rnd.nextInt(3) == 0 ? (1 + rnd.nextInt(60)) * MS : 0;
            if (deadline > 0) {
                b.deadline(Duration.ofNanos(deadline));
            }
            HedgedExecutor ex = HedgedExecutor.of("random", b.build());
            List<Plan> plans = new ArrayList<>();
            for (int i = 1; i <= maxAttempts; i++) {
                Plan p = new Plan(i);
                int kind = rnd.nextInt(10);
                p.success = kind < 5;
                p.fatal = kind == 9;
                p.answerAtNanos = kind == 8 ? -1 : rnd.nextInt(50) * MS; // relative for now
                plans.add(p);
            }
            long cancelAt = rnd.nextInt(6) == 0 ? rnd.nextInt(60) * MS : -1;

            CompletableFuture<String> call = ex.executeAsync(ctx -> {
                Plan p = plans.get(ctx.attemptNumber() - 1);
                p.startNanos = time.nanoTime();
                p.future = new CompletableFuture<>();
                if (p.answerAtNanos >= 0) {
                    long at = p.startNanos + p.answerAtNanos;
                    p.answerAtNanos = at;
                    CompletableFuture<String> f = p.future;
                    var task = time.schedule(
                            () -> {
                                if (p.success) {
                                    f.complete("v" + p.number);
                                } else if (p.fatal) {
                                    f.completeExceptionally(new IllegalArgumentException("fatal " + p.number));
                                } else {
                                    f.completeExceptionally(new IOException("fail " + p.number));
                                }
                            },
                            at - p.startNanos);
                    ctx.onCancel(task::cancel);
                }
                return p.future;
            });
            if (cancelAt >= 0) {
                time.schedule(() -> call.cancel(true), cancelAt);
            }
            List<String> completions = new ArrayList<>();
            call.whenComplete((v, e) -> completions.add(v != null ? v : "error"));
            long endAt;
            // run until the call ends (or nothing is left to happen)
            while (!call.isDone() && time.nextDueNanos() >= 0) {
                time.advanceTo(time.nextDueNanos());
            }
            endAt = time.nanoTime();
            if (!call.isDone()) {
                // legitimately open forever only if nothing can end it: no answer, no deadline, no cancel
                String open = "open call, seed " + seed + " round " + round;
                assertThat(plans.stream().filter(p -> p.startNanos >= 0))
                        .as(open)
                        .noneMatch(p -> p.answerAtNanos >= 0 && (p.success || p.fatal))
                        .anyMatch(p -> p.answerAtNanos < 0);
                assertThat(deadline).isZero();
                assertThat(cancelAt).isNegative();
                assertThat(plans.stream().filter(p -> p.startNanos >= 0).count())
                        .isEqualTo(idempotent ? maxAttempts : 1);
                cancelAt = endAt;
                call.cancel(true);
            }
            time.runUntilIdle();

            String where = "seed " + seed + " round " + round + " max " + maxAttempts + " delay " + delay / MS
                    + "ms idem " + idempotent + " deadline " + deadline / MS + " cancelAt " + cancelAt;
            List<Plan> started = plans.stream().filter(p -> p.startNanos >= 0).toList();
            // attempts: never more than allowed, never after the end, the primary at 0
            assertThat(started.size()).as(where).isBetween(1, idempotent ? maxAttempts : 1);
            assertThat(started.get(0).startNanos).as(where).isZero();
            for (Plan p : started) {
                assertThat(p.startNanos).as(where).isLessThanOrEqualTo(endAt);
            }
            // a hedge never starts before its delay unless a failure started it early
            for (int i = 1; i < started.size(); i++) {
                Plan prev = started.get(i - 1);
                Plan cur = started.get(i);
                boolean prevFailedBefore = started.subList(0, i).stream()
                        .anyMatch(q -> !q.success && q.answerAtNanos >= 0 && q.answerAtNanos <= cur.startNanos);
                if (!prevFailedBefore) {
                    assertThat(cur.startNanos - prev.startNanos).as(where).isGreaterThanOrEqualTo(delay);
                }
            }
            assertThat(completions).as(where).hasSize(1);
            assertThat(call).as(where).isDone();

            // the outcome: the first success that arrived while the call was open wins
            Plan firstSuccess = started.stream()
                    .filter(p -> p.success && p.answerAtNanos >= 0 && p.answerAtNanos <= endAt)
                    .min((x, y) -> Long.compare(x.answerAtNanos, y.answerAtNanos))
                    .orElse(null);
            if (call.isCancelled()) {
                assertThat(cancelAt).as(where).isGreaterThanOrEqualTo(0);
            } else if (!call.isCompletedExceptionally()) {
                assertThat(firstSuccess).as(where).isNotNull();
                assertThat(call.get()).as(where).isEqualTo("v" + firstSuccess.number);
                assertThat(firstSuccess.answerAtNanos).as(where).isEqualTo(endAt);
            } else {
                Throwable cause;
                try {
                    call.get();
                    throw new AssertionError("expected failure");
                } catch (ExecutionException e) {
                    cause = e.getCause();
                }
                if (cause instanceof DeadlineExceededException) {
                    assertThat(endAt).as(where).isEqualTo(deadline);
                } else if (cause instanceof IllegalArgumentException) {
                    // fatal: the call ended at that failure
                } else {
                    // every attempt failed: the primary's error, and no attempt could still answer
                    assertThat(cause).as(where).hasMessage("fail 1");
                    for (Plan p : started) {
                        assertThat(p.success && p.answerAtNanos >= 0 && p.answerAtNanos <= endAt)
                                .as(where)
                                .isFalse();
                    }
                }
                if (firstSuccess != null) {
                    // a success can only lose to an earlier end (deadline or fatal error)
                    assertThat(firstSuccess.answerAtNanos).as(where).isGreaterThanOrEqualTo(endAt);
                }
            }
            // whatever was still running at the end was cancelled
            for (Plan p : started) {
                boolean answeredInTime = p.answerAtNanos >= 0 && p.answerAtNanos <= endAt;
                if (!answeredInTime) {
                    assertThat(p.future).as(where + " attempt " + p.number).isCancelled();
                }
            }
            assertThat(time.pendingTasks()).as(where).isZero();
            HedgeStats stats = ex.stats();
            assertThat(stats.inFlightCalls()).as(where).isZero();
            assertThat(stats.pendingAttempts()).as(where).isZero();
        }
    }
}

package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayContext;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.ScheduledTask;
import java.util.List;

/**
 * One hedged call; it is also the caller's future, so cancelling or completing it from outside
 * cancels every attempt, and the {@link DelayContext} its delay policy sees.
 *
 * <p>The call is one object built in layers, one concern each, read from the bottom up:
 *
 * <ol>
 *   <li>{@link CallerFuture}: the caller's future; completing it from outside ends the call.
 *   <li>{@link CallState}: the fields, the register of attempts, pushback, the policy's view.
 *   <li>{@link CallOutcome}: how the call ends (a win, every attempt failed, deadline, caller).
 *   <li>{@link BudgetWait}: a hedge the budget could not pay for yet, deferred in a queue.
 *   <li>{@link HedgeTiming}: the delay policy, the hedge timer and what it does when it fires.
 *   <li>{@link AttemptLifecycle}: an attempt's start and its outcome (win, retry, failure).
 *   <li>this class: {@link #start}, the entry point from {@code Engine.execute}.
 * </ol>
 *
 * <p>The call's state is RUNNING until it moves once to DONE. While it runs, at most one timer for
 * the next attempt is armed ({@code hedgeTimer}), in one of these roles. The transitions, from
 * {@code HedgedExecutor.executeAsync} to the caller's future completing:
 *
 * <table>
 *   <caption>Transitions of a hedged call</caption>
 *   <tr><th scope="col">event</th><th scope="col">method</th><th scope="col">from</th><th scope="col">to</th></tr>
 *   <tr><td>the executor starts the call</td><td>{@link #start}</td><td>new</td>
 *       <td>primary running; deadline timer armed; hedge timer armed (or waiting for the first
 *       delay, or no hedge: not idempotent, policy declined)</td></tr>
 *   <tr><td>the executor's first latency is known</td><td>{@link #onFirstDelay}</td>
 *       <td>waiting for the first delay</td><td>hedge timer armed from the primary's start</td></tr>
 *   <tr><td>hedge timer fires, budget pays</td><td>{@link #onHedgeTimer}</td><td>timer armed</td>
 *       <td>next attempt running; timer armed after it (until {@code maxAttempts})</td></tr>
 *   <tr><td>hedge timer fires inside a pushback</td><td>{@link #onHedgeTimer}</td><td>timer armed</td>
 *       <td>timer re-armed at the pushback's end</td></tr>
 *   <tr><td>hedge timer fires, no token, an attempt runs</td><td>{@link #onHedgeTimer}</td>
 *       <td>timer armed</td><td>budget wait: queued in {@link DeferredHedges}, backstop timer</td></tr>
 *   <tr><td>a token comes for the call first in line</td><td>{@link #grantDeferred}</td>
 *       <td>budget wait</td><td>next attempt running; backstop cancelled</td></tr>
 *   <tr><td>hedge timer fires, no token, nothing runs</td><td>{@link #onHedgeTimer}</td>
 *       <td>timer armed</td><td>no hedge ({@code BudgetExhausted}); DONE if every attempt failed</td></tr>
 *   <tr><td>an attempt succeeds</td><td>{@link #onAttemptDone}</td><td>RUNNING</td>
 *       <td>DONE: losers cancelled, caller's future completed ({@link #settle})</td></tr>
 *   <tr><td>a retryable failure, budget pays</td><td>{@link #onAttemptDone}</td><td>RUNNING</td>
 *       <td>retry running at once; its timer replaces the armed one</td></tr>
 *   <tr><td>a retryable failure inside a pushback</td><td>{@link #onAttemptDone}</td><td>RUNNING</td>
 *       <td>timer armed as a retry at the pushback's end</td></tr>
 *   <tr><td>a fatal failure, or the last attempt failed</td><td>{@link #onAttemptDone}</td>
 *       <td>RUNNING</td><td>DONE: caller's future failed ({@link #settle})</td></tr>
 *   <tr><td>no attempt runs and none can start</td><td>{@link #endIfIdle}</td><td>RUNNING</td>
 *       <td>DONE: the primary's failure</td></tr>
 *   <tr><td>the attempt function asks to stop</td><td>{@link #stopFurtherAttempts}</td><td>timer armed</td>
 *       <td>no further attempt</td></tr>
 *   <tr><td>deadline, scheduler closed, caller cancels or completes</td><td>{@link #terminate}</td>
 *       <td>RUNNING</td><td>DONE: timers and attempts cancelled</td></tr>
 * </table>
 *
 * <p>Decisions (start an attempt, end the call) are taken under the call's monitor, and an attempt
 * is reserved there before it runs, so a hedge timer racing a retry cannot start an extra attempt.
 * User code (attempt functions, policies, cancel hooks, listeners, the caller's dependent stages)
 * always runs outside the monitor. The hot path — a primary that wins before its delay — takes
 * the monitor twice and reads the clock three times (the reading that computes the hedge delay
 * also dates the hedge timer); a primary that answers inside {@link #start} takes no monitor and
 * reads the clock twice.
 */
final class HedgedCall<T> extends AttemptLifecycle<T> {

    HedgedCall(Engine engine, AttemptFunction<T> fn, boolean idempotent, CallOptions options) {
        super(engine, fn, idempotent, options);
    }

    /** @param deadlineNanos the call's deadline ({@link Engine#deadlineNanos}), 0 for none */
    void start(long deadlineNanos) {
        engine.calls.increment();
        boolean hedgeable = maxAttempts > 1;
        if (hedgeable) {
            if (engine.budgetSharesTicker) {
                engine.budget.recordPrimary(startNanos);
            } else {
                engine.budget.recordPrimary();
            }
        } else if (engine.maxAttempts > 1) {
            engine.noteNonIdempotent();
            publishNotHedged(NotHedged.Reason.NON_IDEMPOTENT);
        }
        // not yet shared with any other thread: no monitor needed to register the primary
        Attempt<T> primary = new Attempt<>(this, 1, startNanos, List.of());
        first = primary;
        started = 1;
        inFlight = 1;
        run(primary);
        if (hedgeable && !engine.deferred.isEmpty()) {
            engine.deferred.drainSoon(); // this primary's deposit may complete a token for a waiting hedge
        }
        if (state == DONE) {
            return; // decided already (e.g. a synchronously completed primary): arm no timer at all
        }
        if (deadlineNanos > 0) {
            ScheduledTask t;
            try {
                t = engine.deadlines.schedule(this::onDeadline, this::onDeadlineDiscarded, deadlineNanos);
            } catch (RuntimeException e) {
                // a call whose deadline cannot be armed could hang: end it now, visibly
                engine.logSchedulerFailure(e);
                publishNotHedged(NotHedged.Reason.SCHEDULER_REJECTED);
                terminate(CallCompleted.CallOutcome.FAILURE, e, false);
                return;
            }
            boolean cancelNow;
            synchronized (this) {
                cancelNow = state == DONE;
                if (!cancelNow) {
                    deadlineTimer = t;
                }
            }
            if (cancelNow) {
                t.cancel();
            }
        }
        if (hedgeable) {
            armHedgeTimer(primary);
        }
    }
}

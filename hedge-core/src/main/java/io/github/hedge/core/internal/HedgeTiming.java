package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.resilience4j.core.ContextPropagator;
import java.util.concurrent.RejectedExecutionException;

/**
 * The fifth layer of a {@link HedgedCall}: when the next attempt is due. After an attempt starts,
 * {@link #armHedgeTimer} asks the delay policy for the delay (counted from that attempt's start,
 * stretched by a pushback) and arms one timer, whose task is the attempt itself; a call whose
 * primary started before the executor knew any latency waits for the first delay instead ({@link
 * #onFirstDelay}). When the timer fires, {@link #onHedgeTimer} starts the hedge if the budget pays
 * for it, waits out a pushback that came meanwhile, or defers the hedge ({@link BudgetWait}).
 */
abstract class HedgeTiming<T> extends BudgetWait<T> {

    HedgeTiming(Engine engine, AttemptFunction<T> fn, boolean idempotent, CallOptions options) {
        super(engine, fn, idempotent, options);
    }

    /**
     * Queues the call to wait for the executor's first delay, unless it has ended: under the
     * monitor, so {@link #finish} either sees it queued or it is not queued at all.
     */
    private boolean queueForFirstDelay() {
        synchronized (this) {
            if (state != DONE) {
                awaitingDelay = true;
                engine.awaitingDelay.add(call());
                return true;
            }
        }
        engine.leftAwaitingDelay();
        return false;
    }

    /**
     * The executor has latency now (an attempt answered): ask the policy again for a call whose
     * primary started before it had any, and arm the hedge timer from the primary's start, so a
     * primary that has run past the new delay is hedged at once. Called by the thread that polled
     * the call from {@link Engine#awaitingDelay}.
     */
    final void onFirstDelay() {
        if (state == DONE || !takeAwaitingDelay()) {
            return; // it ended, and finish() accounts for it
        }
        armHedgeTimer(first);
    }

    /** After attempt {@code prev} started: ask the policy for the next delay and arm the timer. */
    final void armHedgeTimer(Attempt<T> prev) {
        if (state == DONE) {
            return; // pre-check; the monitor in scheduleHedgeTimer decides
        }
        if (prev.number >= maxAttempts) {
            if (maxAttempts > 1) {
                publishNotHedged(NotHedged.Reason.MAX_ATTEMPTS);
            }
            return;
        }
        if (stopHedging) {
            publishNotHedged(stopReason);
            return;
        }
        long delay = engine.delayNanos(this); // policies are user code: outside the monitor
        if (delay < 0) {
            if (prev.number == 1 && !propagate() && engine.awaitFirstDelay(this) && queueForFirstDelay()) {
                return; // the executor's next answer asks the policy again (onFirstDelay)
            }
            publishNotHedged(NotHedged.Reason.POLICY_DECLINED);
            return;
        }
        // the delay counts from the previous attempt's start; pushback may stretch it
        long now = engine.ticker.nanoTime();
        long elapsed = now - prev.startNanos;
        long wait = delay - elapsed;
        long pushbackUntil = pushbackUntil();
        if (pushbackUntil != NO_PUSHBACK) {
            wait = Math.max(wait, pushbackUntil - now);
        }
        wait = Math.max(0, wait);
        prev.hedgeDelayNanos = elapsed + wait;
        scheduleHedgeTimer(prev, now, wait);
    }

    /**
     * Arms the timer that starts the attempt after {@code prev}; the attempt object is the task.
     *
     * @param now the caller's reading of the executor's ticker: the timer is due {@code delayNanos}
     *     after it
     * @return false if the scheduler refused the timer
     */
    final boolean scheduleHedgeTimer(Attempt<T> prev, long now, long delayNanos) {
        Runnable task = prev;
        if (propagate()) {
            try {
                task = ContextPropagator.decorateRunnable(engine.propagators, prev); // reads the context now
            } catch (Throwable e) { // NOPMD: a propagator is user code; a hedge without its context is not sent
                engine.logHookFailure("a context propagator", e);
                return false;
            }
        }
        ScheduledTask t;
        try {
            t = engine.timers.schedule(task, prev, now, delayNanos);
        } catch (RuntimeException e) {
            // no timer, no hedge: the attempts already running still answer the call
            engine.logSchedulerFailure(e);
            publishNotHedged(NotHedged.Reason.SCHEDULER_REJECTED);
            return false;
        }
        boolean cancelNow;
        synchronized (this) {
            // superseded: the call ended, a retry started the next attempt, or another timer for the
            // same next attempt is armed already (a primary that failed with pushback inside start())
            cancelNow = state == DONE || started != prev.number || hedgeTimer != null;
            if (!cancelNow) {
                hedgeTimer = t;
            }
        }
        if (cancelNow) {
            t.cancel();
        }
        return true;
    }

    /**
     * The timer armed after attempt {@code prev} fired. When the budget has no token (or other
     * calls already wait for one) and another attempt is still running, the hedge is not given up
     * but deferred ({@link BudgetWait}): the timer is re-armed as a backstop after {@link
     * #recheckNanos}, and the call joins the executor's queue of {@link DeferredHedges}. The budget
     * still grants every hedge, so the extra load is capped as before.
     */
    final void onHedgeTimer(Attempt<T> prev) {
        if (!engine.deferred.isEmpty()) {
            engine.deferred.drainSoon(); // calls that waited longer take the tokens first (this one too, if it waits)
        }
        Attempt<T> next = null;
        long wait = -1;
        boolean stop = false;
        boolean denied = false;
        boolean queue = false;
        boolean leftQueue = false;
        boolean afterFailure;
        long now;
        synchronized (this) {
            if (state == DONE || started != prev.number) {
                return; // a retry or the queue started the next attempt first, or the call ended
            }
            hedgeTimer = null;
            afterFailure = retryAfterPushback;
            retryAfterPushback = false;
            now = engine.ticker.nanoTime();
            if (stopHedging) {
                stop = true;
            } else {
                long pushbackUntil = pushbackUntil();
                if (pushbackUntil != NO_PUSHBACK && pushbackUntil - now > 0) {
                    wait = pushbackUntil - now; // pushback arrived after the timer was armed
                    retryAfterPushback = afterFailure;
                } else if (!budgetWait && engine.deferred.isEmpty() && engine.budget.tryAcquire()) {
                    next = reserveLocked(now);
                } else {
                    denied = true;
                    if (inFlight > 0) {
                        // someone may still answer: wait in line for a token rather than give the hedge up
                        budgetWait = true;
                        queue = true;
                        retryAfterPushback = afterFailure;
                        wait = recheckNanos(now - prev.startNanos);
                        prev.hedgeDelayNanos = now - prev.startNanos + wait;
                    } else {
                        leftQueue = budgetWait;
                        budgetWait = false;
                    }
                }
            }
        }
        if (leftQueue) {
            engine.deferred.remove(call());
        }
        if (stop) {
            publishNotHedged(stopReason);
        } else if (wait >= 0) {
            if (!scheduleHedgeTimer(prev, now, wait)) {
                refusedIfBudgetWait();
                endIfIdle();
                return;
            }
            if (queue) {
                joinQueue(prev);
            }
        } else if (denied) {
            refusedByBudget(prev.number + 1);
        } else {
            startHedge(
                    next,
                    afterFailure ? HedgeSent.Reason.PREVIOUS_FAILED : HedgeSent.Reason.DELAY_ELAPSED,
                    afterFailure ? 0 : prev.hedgeDelayNanos);
        }
        if (stop || (denied && wait < 0)) {
            endIfIdle(); // every attempt failed and the retry that waited out a pushback may not start
        }
    }

    /**
     * The timer armed after {@code prev} was dropped by a closing scheduler: no hedge; and if it was
     * a retry waiting out a pushback with nothing in flight, the call ends now.
     */
    final void onHedgeTimerDiscarded(Attempt<T> prev) {
        synchronized (this) {
            if (state == DONE || started != prev.number) {
                return;
            }
            hedgeTimer = null;
            retryAfterPushback = false;
            budgetWait = false; // not the budget's doing any more
        }
        engine.deferred.remove(call());
        engine.logSchedulerFailure(new RejectedExecutionException("scheduler closed with a hedge timer pending"));
        publishNotHedged(NotHedged.Reason.SCHEDULER_REJECTED);
        endIfIdle();
    }

    /**
     * The attempt's function asked for no further attempt: the armed hedge timer is cancelled.
     *
     * @param reason a reason an adapter may give (Checks.adapterStopReason), published in NotHedged
     */
    final void stopFurtherAttempts(NotHedged.Reason reason) {
        ScheduledTask t;
        synchronized (this) {
            if (!stopHedging) {
                stopReason = reason;
            }
            stopHedging = true;
            t = hedgeTimer;
            hedgeTimer = null;
        }
        if (t != null && t.cancel()) {
            publishNotHedged(reason);
        }
    }
}

package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.resilience4j.core.ContextPropagator;

/**
 * The fourth layer of a {@link HedgedCall}: a hedge the budget could not pay for when its delay
 * elapsed. While another attempt still runs, the hedge is deferred rather than given up: the call
 * joins the executor's queue of {@link DeferredHedges} ({@link #joinQueue}), which hands each token
 * to the call that has waited longest ({@link #grantDeferred}); the hedge timer stays armed as a
 * backstop that re-checks after {@link #recheckNanos}. A hedge the budget refuses for good is
 * counted once ({@link #refusedByBudget}); one still waiting when the call ends is counted then
 * ({@link #refusedIfBudgetWait}).
 */
abstract class BudgetWait<T> extends CallOutcome<T> {
    /** The shortest wait before a deferred hedge checks the budget again, in ns. */
    static final long MIN_BUDGET_RECHECK_NANOS = 1_000_000L;
    /**
     * With a budget given in the configuration, a deferred hedge that has waited 20 ms or more
     * drains the queue again after at most this long or an eighth of its wait, whichever is longer,
     * in ns: other executors may share that budget, and the tokens their primaries deposit reach
     * this executor's waiting calls only through these re-checks, which would otherwise lose them
     * to those executors' fresh hedges; an eighth of the wait keeps the checks of a call stuck for
     * minutes few.
     */
    static final long MAX_BUDGET_RECHECK_NANOS = 10_000_000L;

    BudgetWait(Engine engine, AttemptFunction<T> fn, boolean idempotent, CallOptions options) {
        super(engine, fn, idempotent, options);
    }

    /** Runs a reserved attempt and arms the timer after it ({@link AttemptLifecycle}). */
    abstract void startHedge(Attempt<T> a, HedgeSent.Reason reason, long delayNanos);

    /**
     * @param waitedNanos how long the hedge has waited since the previous attempt started
     * @return when the backstop timer of a deferred hedge re-checks the budget, in ns from now: half
     *     the wait (at least {@link #MIN_BUDGET_RECHECK_NANOS}); with a budget given in the
     *     configuration, at most {@link #MAX_BUDGET_RECHECK_NANOS} or an eighth of the wait
     */
    final long recheckNanos(long waitedNanos) {
        return engine.budgetOwned
                ? Math.max(MIN_BUDGET_RECHECK_NANOS, waitedNanos / 2)
                : Math.max(
                        MIN_BUDGET_RECHECK_NANOS,
                        Math.min(waitedNanos / 2, Math.max(MAX_BUDGET_RECHECK_NANOS, waitedNanos / 8)));
    }

    /**
     * Puts the call in the queue of deferred hedges, once its backstop timer is armed; a call
     * already in it keeps its place. A call that ended (or was served) before it was queued leaves
     * the queue at once.
     */
    final void joinQueue(Attempt<T> prev) {
        if (engine.deferred.contains(call())) {
            return; // it keeps its place, and the drain in onHedgeTimer ran
        }
        boolean added = false;
        try {
            engine.deferred.add(call(), waiter(prev));
            added = true;
        } catch (Throwable e) { // NOPMD: a context propagator is user code
            // not queued: its timer asks again, and a hedge without its context is not sent
            engine.logHookFailure("a context propagator", e);
        }
        if (added) {
            boolean stale;
            synchronized (this) {
                stale = state == DONE || !budgetWait; // it ended (or was served) before it was queued
            }
            if (stale) {
                engine.deferred.remove(call());
            } else {
                engine.deferred.drainSoon(); // a token may have come meanwhile, or it is first in line
            }
        }
    }

    /**
     * @return this call's place in the queue of deferred hedges: run (with the caller's context
     *     when propagators are set), it starts the hedge after {@code prev} if the budget has a token
     */
    private DeferredHedges.Waiter waiter(Attempt<T> prev) {
        final class Grant implements DeferredHedges.Waiter {
            private boolean settled;
            private final Runnable grant;

            Grant() {
                Runnable r = () -> settled = grantDeferred(prev);
                // read the caller's context now: this runs on the hedge timer's thread, inside that context
                grant = propagate() ? ContextPropagator.decorateRunnable(engine.propagators, r) : r;
            }

            @Override
            public void run() {
                grant.run();
            }

            @Override
            public boolean settled() {
                return settled;
            }
        }
        return new Grant();
    }

    /**
     * Called by {@link DeferredHedges#drain()} when this call is first in line: takes a token and
     * starts the hedge after {@code prev}, whose backstop timer it cancels.
     *
     * @return false if the budget had no token (the call keeps its place); true if the hedge
     *     started or the call no longer waits for it (it ended, a retry started the next attempt, a
     *     pushback or a stop came)
     */
    final boolean grantDeferred(Attempt<T> prev) {
        Attempt<T> next;
        ScheduledTask backstop;
        boolean afterFailure;
        synchronized (this) {
            if (state == DONE || started != prev.number || !budgetWait || stopHedging) {
                return true;
            }
            long now = engine.ticker.nanoTime();
            long pushbackUntil = pushbackUntil();
            if (pushbackUntil != NO_PUSHBACK && pushbackUntil - now > 0) {
                return true; // its timer waits out the pushback and queues it again
            }
            if (!engine.budget.tryAcquire()) {
                return false;
            }
            next = reserveLocked(now);
            budgetWait = false;
            afterFailure = retryAfterPushback;
            retryAfterPushback = false;
            prev.hedgeDelayNanos = now - prev.startNanos;
            backstop = hedgeTimer;
            hedgeTimer = null;
        }
        cancel(backstop);
        startHedge(
                next,
                afterFailure ? HedgeSent.Reason.PREVIOUS_FAILED : HedgeSent.Reason.BUDGET_DEFERRED,
                afterFailure ? 0 : prev.hedgeDelayNanos);
        return true;
    }

    /**
     * The budget refused attempt {@code number} for good: counted in {@code budgetDenied}, and
     * {@link BudgetExhausted} and {@code NotHedged} published. A hedge that waits for a token is not
     * refused yet: it is counted here only if the call ends before a token comes.
     */
    final void refusedByBudget(int number) {
        engine.budgetDenied.increment();
        if (engine.events.hasListeners(BudgetExhausted.class)) {
            engine.events.publish(new BudgetExhausted(engine.name, callId(), number, engine.ticker.nanoTime()));
        }
        publishNotHedged(NotHedged.Reason.BUDGET_EXHAUSTED);
    }

    /**
     * A hedge that waited for a token will never be sent (the call ended, or its timer failed).
     * Called after the call is DONE by the thread that made it so, or with no hedge timer armed:
     * {@code budgetWait} is then stable, so the hot path reads it without the monitor.
     */
    @Override
    final void refusedIfBudgetWait() {
        if (!budgetWait) {
            return;
        }
        int number;
        synchronized (this) {
            if (!budgetWait) {
                return;
            }
            budgetWait = false;
            number = started + 1;
        }
        engine.deferred.remove(call());
        refusedByBudget(number);
    }
}

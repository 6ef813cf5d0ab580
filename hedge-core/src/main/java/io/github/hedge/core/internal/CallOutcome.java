package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DeadlineExceededException;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.ScheduledTask;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * The third layer of a {@link HedgedCall}: how a call ends. An attempt's answer wins ({@link
 * #settle}), every attempt failed ({@link #endIfIdle}), or something outside the attempts ends it:
 * the deadline, a closing scheduler, the caller ({@link #terminate}). Each way moves the state to
 * DONE once, under the monitor, cancels the timers and the losers outside it, counts the outcome,
 * publishes {@link CallCompleted} and completes the caller's future last.
 */
abstract class CallOutcome<T> extends CallState<T> {
    /** The shortest time a primary left running for the savings sample may run on, in ns. */
    static final long MIN_SAMPLE_CAP_NANOS = 1_000_000_000L;

    CallOutcome(Engine engine, AttemptFunction<T> fn, boolean idempotent, CallOptions options) {
        super(engine, fn, idempotent, options);
    }

    /** A hedge deferred for want of a token will never go out: count it as refused ({@link BudgetWait}). */
    abstract void refusedIfBudgetWait();

    /**
     * The primary returned an already successful stage, inside {@link HedgedCall#start}: no other
     * thread can decide this call yet (the caller has not got it, no timer is armed, no other
     * attempt exists), so it ends without taking the monitor, and its state and the attempt's move
     * by release stores rather than a CAS and a volatile store (fences): {@code answer} below
     * publishes them with the call.
     */
    final void wonSynchronously(Attempt<T> a, T value) {
        long now = engine.ticker.nanoTime();
        a.succeededAlone(now);
        engine.tracker.recordAnswer(a.target, a.startNanos, now);
        if (!engine.awaitingDelay.isEmpty()) {
            engine.drainAwaitingDelay();
        }
        engine.savings.primaryWon(now - startNanos);
        inFlight = 0;
        STATE.setRelease(this, DONE);
        engine.wins.increment(); // the call succeeded and its attempt ended
        finish(CallCompleted.CallOutcome.SUCCESS, 1, now);
        answer(value);
    }

    /**
     * The call was decided by attempt {@code a} (it won, or its failure ends the call), and the
     * state is DONE: cancels the losers (but a sampled beaten primary), counts the outcome and
     * completes the caller's future.
     *
     * @param failure null when {@code a} won with {@code value}
     */
    final void settle(Attempt<T> a, T value, Throwable failure, List<Attempt<T>> losers, long now) {
        boolean win = failure == null;
        if (win && a.number > 1 && losers != null && engine.loserSampling > 0) {
            losers = leaveSampledPrimaryRunning(losers, now);
        }
        cancelAll(losers, now);
        if (win) {
            if (a.number > 1) {
                engine.hedgesWon.increment();
                if (engine.events.hasListeners(HedgeWon.class)) {
                    engine.events.publish(new HedgeWon(engine.name, callId(), a.number, a.target, now));
                }
            }
            engine.wins.increment(); // the call succeeded and this attempt ended
            if (a.number == 1) {
                engine.savings.primaryWon(now - startNanos); // one sample of both distributions
            } else {
                engine.savings.hedgeWon(now - startNanos);
            }
            finish(CallCompleted.CallOutcome.SUCCESS, a.number, now);
            answer(value);
        } else {
            engine.failures.increment();
            finish(CallCompleted.CallOutcome.FAILURE, 0, now);
            answerFailure(failure);
        }
    }

    /**
     * No further attempt will start (its timer could not be armed, was dropped, or the budget or a
     * stop refused it): if no attempt runs either, nothing can answer the call any more, so it fails
     * now with the primary's failure.
     */
    final void endIfIdle() {
        Throwable failure;
        ScheduledTask deadlineT;
        synchronized (this) {
            if (state == DONE || inFlight > 0 || first.error == null) {
                return;
            }
            state = DONE;
            failure = first.error;
            deadlineT = deadlineTimer;
            deadlineTimer = null;
        }
        cancel(deadlineT);
        engine.failures.increment();
        finish(CallCompleted.CallOutcome.FAILURE, 0, engine.ticker.nanoTime());
        answerFailure(failure);
    }

    final void onDeadline() {
        int attemptsStarted;
        synchronized (this) {
            attemptsStarted = started;
        }
        terminate(
                CallCompleted.CallOutcome.DEADLINE_EXCEEDED,
                new DeadlineExceededException(engine.name, engine.deadlineNanos(options), attemptsStarted),
                true);
    }

    /** The deadline timer was dropped by a closing scheduler: the call cannot be bounded, so it ends now. */
    final void onDeadlineDiscarded() {
        RejectedExecutionException e = new RejectedExecutionException(
                "the scheduler of hedged executor '" + engine.name + "' was closed before this call's deadline");
        engine.logSchedulerFailure(e);
        publishNotHedged(NotHedged.Reason.SCHEDULER_REJECTED);
        terminate(CallCompleted.CallOutcome.FAILURE, e, true);
    }

    @Override
    final void endedFromOutside() {
        terminate(CallCompleted.CallOutcome.CANCELLED, null, false);
    }

    /**
     * Ends the call for a reason outside its attempts (the deadline, a scheduler that refused the
     * deadline timer, the caller): cancels every timer and running attempt and, unless the caller
     * ended it, fails the caller's future with {@code error} (with the attempt failures so far
     * suppressed when {@code ownError}: an exception this executor created).
     */
    final void terminate(CallCompleted.CallOutcome outcome, Throwable error, boolean ownError) {
        List<Attempt<T>> running;
        ScheduledTask hedgeT;
        ScheduledTask deadlineT;
        long now = engine.ticker.nanoTime();
        synchronized (this) {
            if (state == DONE) {
                return;
            }
            state = DONE;
            if (ownError) {
                attachAttemptFailuresLocked(error);
            }
            running = runningLocked();
            hedgeT = hedgeTimer;
            deadlineT = deadlineTimer;
            hedgeTimer = null;
            deadlineTimer = null;
        }
        cancel(hedgeT);
        cancel(deadlineT);
        cancelAll(running, now);
        switch (outcome) {
            case DEADLINE_EXCEEDED:
                engine.deadlineExceeded.increment();
                break;
            case CANCELLED:
                engine.cancelled.increment();
                break;
            default:
                engine.failures.increment();
        }
        finish(outcome, 0, now);
        if (error != null) {
            answerFailure(error);
        }
    }

    /**
     * Attaches the attempts' failures to an exception this executor created (a deadline). Never
     * called on an attempt's own exception: that object belongs to foreign code and may be shared
     * (preallocated exceptions are common in Netty and driver code), so it is never mutated.
     */
    private void attachAttemptFailuresLocked(Throwable own) {
        for (int i = 1; i <= started; i++) {
            Throwable e = attempt(i).error;
            if (e != null && e != own) {
                own.addSuppressed(e);
            }
        }
    }

    private void cancelAll(List<Attempt<T>> running, long now) {
        if (running == null) {
            return;
        }
        for (Attempt<T> o : running) {
            cancelOne(o, now);
        }
    }

    private void cancelOne(Attempt<T> o, long now) {
        if (o.cancel(now)) {
            engine.attemptsEnded.increment();
            // a cancelled attempt only shows its latency exceeds its elapsed time: a censored sample
            engine.tracker.recordCensored(o.target, now - o.startNanos);
            if (o.number == 1) {
                engine.savings.primaryCancelled(now - o.startNanos);
            }
        }
    }

    /**
     * A hedge won: when the sample ({@link io.github.hedge.core.HedgeConfig.Builder#loserSampling}) picks this call, the
     * beaten primary is taken out of the losers and left to finish, so its real latency reaches
     * the savings estimate and the tracker; a timer cancels it after 100 times the call's duration
     * (at least 1 s, at most the savings window).
     *
     * @return the losers to cancel now
     */
    private List<Attempt<T>> leaveSampledPrimaryRunning(List<Attempt<T>> losers, long now) {
        Attempt<T> primary = null;
        for (Attempt<T> o : losers) {
            if (o.number == 1) {
                primary = o;
            }
        }
        if (primary == null || !engine.sampleBeatenPrimary()) {
            return losers;
        }
        List<Attempt<T>> rest = new ArrayList<>(losers);
        rest.remove(primary);
        long took = Math.max(0, now - startNanos);
        long window = engine.savingsWindowNanos;
        long cap = took >= window / 100 ? window : Math.min(window, Math.max(MIN_SAMPLE_CAP_NANOS, took * 100));
        Attempt<T> p = primary;
        // bounded the same way whether the timer fires or a closing scheduler drops it
        Runnable bound = () -> cancelOne(p, engine.ticker.nanoTime());
        ScheduledTask t;
        try {
            t = engine.timers.schedule(bound, bound::run, cap);
        } catch (RuntimeException e) {
            return losers; // no timer to bound it: cancel it with the others
        }
        p.sampleCap = t; // from here its trace shows it LEFT_RUNNING
        if (!p.isRunning()) {
            t.cancel(); // it finished before the timer was stored
        }
        return rest;
    }

    /**
     * Publishes CallCompleted with the per-attempt trace, when a listener wants it: the trace is
     * built from the attempts only then, so a listener that wants only slow calls costs a fast call
     * one comparison.
     */
    final void finish(CallCompleted.CallOutcome outcome, int winner, long now) {
        refusedIfBudgetWait(); // a hedge deferred for want of a token never went out
        if (awaitingDelay && takeAwaitingDelay()) {
            // it ended before the executor knew any latency: no delay, so no hedge
            if (engine.awaitingDelay.remove(this)) {
                engine.leftAwaitingDelay();
            }
            publishNotHedged(NotHedged.Reason.POLICY_DECLINED);
        }
        if (!engine.events.wantsCallCompleted(outcome, now - startNanos)) {
            return;
        }
        List<AttemptRecord> trace;
        synchronized (this) {
            trace = new ArrayList<>(started);
            for (int i = 1; i <= started; i++) {
                Attempt<T> o = attempt(i);
                trace.add(o.record(startNanos, now, o.number == winner));
            }
        }
        engine.events.publish(new CallCompleted(
                engine.name,
                callId(),
                outcome,
                now - startNanos,
                winner,
                trace,
                options.operation(),
                options.details(),
                now));
    }
}

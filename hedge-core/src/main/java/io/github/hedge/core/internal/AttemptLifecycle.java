package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.ErrorClassifier;
import io.github.hedge.core.event.AttemptStarted;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.spi.ScheduledTask;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The sixth layer of a {@link HedgedCall}: one attempt from start to end. {@link #run} calls the
 * attempt function and wires its stage; {@link #onAttemptDone} takes its outcome: a success wins,
 * a retryable failure reserves a retry at once (or after the pushback the server asked for), and
 * a fatal failure, or the last failure with nothing left running, ends the call ({@link
 * CallOutcome#settle}).
 */
abstract class AttemptLifecycle<T> extends HedgeTiming<T> {

    AttemptLifecycle(Engine engine, AttemptFunction<T> fn, boolean idempotent, CallOptions options) {
        super(engine, fn, idempotent, options);
    }

    /**
     * Starts a registered attempt: calls the attempt function and wires its outcome. An attempt
     * cancelled between its reservation and this point (the call ended meanwhile) is not started:
     * no attempt function runs after the call ended.
     *
     * <p>Any {@link CompletionStage} is an ordinary outcome: only a plain {@link CompletableFuture}
     * that is already done takes the synchronous shortcut; every other stage (a {@code
     * minimalCompletionStage()}, a foreign implementation) is observed through {@code whenComplete},
     * and a stage that throws while being observed fails its attempt.
     */
    final void run(Attempt<T> a) {
        if (!a.isRunning()) {
            return; // cancelled after it was reserved: the call ended before it could start
        }
        if (engine.events.hasListeners(AttemptStarted.class)) {
            engine.events.publish(new AttemptStarted(engine.name, callId(), a.number, a.startNanos));
        }
        CompletionStage<T> stage;
        try {
            stage = fn.start(a);
            if (stage == null) {
                throw new NullPointerException("attempt function returned null instead of a CompletionStage");
            }
        } catch (Throwable t) {
            onAttemptDone(a, null, t);
            return;
        }
        try {
            if (stage.getClass() == CompletableFuture.class && ((CompletableFuture<T>) stage).isDone()) {
                // not attached: cancelling a completed future does nothing, and attaching is a volatile store
                completedAlready(a, (CompletableFuture<T>) stage);
            } else {
                a.attach(stage);
                stage.whenComplete(a);
            }
        } catch (Throwable t) {
            onAttemptDone(a, null, t); // a stage that refuses a callback can never answer
        }
    }

    /** The attempt returned a plain future that is done: no callback to register. */
    private void completedAlready(Attempt<T> a, CompletableFuture<T> cf) {
        T value = null;
        Throwable error = null;
        try {
            value = cf.getNow(null);
        } catch (Throwable t) {
            error = t;
        }
        if (error == null && a.number == 1) {
            wonSynchronously(a, value);
        } else {
            onAttemptDone(a, value, error);
        }
    }

    @Override
    final void startHedge(Attempt<T> a, HedgeSent.Reason reason, long delayNanos) {
        if (engine.events.hasListeners(HedgeSent.class)) {
            engine.events.publish(new HedgeSent(engine.name, callId(), a.number, reason, delayNanos, a.startNanos));
        }
        run(a);
        armHedgeTimer(a);
    }

    /** Called once per attempt with its outcome (directly or as its stage's callback). */
    final void onAttemptDone(Attempt<T> a, T value, Throwable error) {
        long now = engine.ticker.nanoTime();
        Throwable cause = unwrap(error);
        if (!a.finish(error == null ? Attempt.SUCCEEDED : Attempt.FAILED, now, cause)) {
            return; // it was cancelled first: a loser, already accounted for
        }
        if (error != null) {
            engine.attemptsEnded.increment(); // a success ends as a win (engine.wins) or below
        }
        ScheduledTask cap = a.sampleCap;
        if (cap != null) {
            cap.cancel(); // a primary left running for the savings sample answered in time
        }
        if (error == null) {
            engine.tracker.recordAnswer(a.target, a.startNanos, now);
            if (!engine.awaitingDelay.isEmpty()) {
                engine.drainAwaitingDelay();
            }
        }
        ErrorClassifier.Decision decision = error == null ? null : classify(cause);
        ScheduledTask hedgeT = null;
        ScheduledTask deadlineT = null;
        List<Attempt<T>> losers = null;
        Throwable failure = null;
        boolean win = false;
        boolean retry = false;
        long pushbackWait = -1;
        Attempt<T> waitAfter = null;
        int deniedNumber = 0;
        synchronized (this) {
            inFlight--;
            if (state == DONE) {
                if (error == null) {
                    engine.attemptsEnded.increment(); // answered after another attempt won
                    if (a.number == 1) {
                        // a primary left running for the savings sample: the call was won by a hedge
                        engine.savings.primaryAnswered(now - a.startNanos);
                    }
                }
                return;
            }
            if (error == null) {
                win = true;
            } else {
                boolean fatal = decision == ErrorClassifier.Decision.FATAL;
                if (!fatal && !stopHedging && started < maxAttempts) {
                    long pushbackUntil = pushbackUntil();
                    if (pushbackUntil != NO_PUSHBACK && pushbackUntil - now > 0) {
                        // the server asked to wait (often with this very failure): the next attempt
                        // starts when the pushback ends, through the hedge timer, which it replaces
                        pushbackWait = pushbackUntil - now;
                        waitAfter = attempt(started);
                        retryAfterPushback = true;
                        hedgeT = hedgeTimer;
                        hedgeTimer = null;
                    } else if (engine.budget.tryAcquire()) {
                        // the next attempt starts now; its own timer replaces the pending one
                        reserveLocked(now).retryPending = true;
                        retry = true;
                        hedgeT = hedgeTimer;
                        hedgeTimer = null;
                    } else {
                        deniedNumber = started + 1;
                    }
                }
                if (!retry && pushbackWait < 0) {
                    if (fatal) {
                        failure = cause;
                    } else if (inFlight == 0) {
                        failure = first.error;
                    }
                    // else: others still run, and a failure never wins while one of them may succeed
                }
            }
            if (win || failure != null) {
                // a release store, not a volatile one: every decision reads the state under this monitor,
                // whose exit orders the store; the reads outside it are pre-checks (a fence saved per call)
                STATE.setRelease(this, DONE);
                losers = runningLocked();
                hedgeT = hedgeTimer;
                deadlineT = deadlineTimer;
                hedgeTimer = null;
                deadlineTimer = null;
            }
        }
        cancel(hedgeT);
        cancel(deadlineT);
        if (deniedNumber > 0) {
            refusedByBudget(deniedNumber);
        }
        if (pushbackWait >= 0) {
            if (!scheduleHedgeTimer(waitAfter, now, pushbackWait)) {
                endIfIdle();
            }
            return;
        }
        if (retry) {
            runRetries();
            return;
        }
        if (!win && failure == null) {
            return;
        }
        settle(a, value, win ? null : failure, losers, now);
    }

    /**
     * Starts the retries just reserved, with the caller's context when propagators are set. If a
     * propagator throws before they start, the reserved attempts fail with its exception instead of
     * staying reserved forever.
     */
    private void runRetries() {
        if (retryRunner == null) {
            runReservedRetries();
            return;
        }
        try {
            retryRunner.run();
        } catch (Throwable t) { // NOPMD: a context propagator is user code
            engine.logHookFailure("a context propagator", t);
            failReservedRetries(t);
        }
    }

    @Override
    final void runReservedRetries() {
        for (Attempt<T> next; (next = takeReservedRetry()) != null; ) {
            startHedge(next, HedgeSent.Reason.PREVIOUS_FAILED, 0);
        }
    }

    /** @return the first attempt reserved as a retry and not started yet, now taken; null if none */
    private synchronized Attempt<T> takeReservedRetry() {
        for (int i = 2; i <= started; i++) {
            Attempt<T> a = more[i - 2];
            if (a.retryPending) {
                a.retryPending = false;
                return a;
            }
        }
        return null;
    }

    private void failReservedRetries(Throwable t) {
        for (Attempt<T> next; (next = takeReservedRetry()) != null; ) {
            onAttemptDone(next, null, t);
        }
    }

    private ErrorClassifier.Decision classify(Throwable cause) {
        try {
            ErrorClassifier own = options.errorClassifier();
            ErrorClassifier.Decision d = (own != null ? own : engine.classifier).classify(cause);
            return d == null ? ErrorClassifier.Decision.RETRYABLE : d;
        } catch (Throwable e) { // NOPMD: user code; a classifier that throws means "retryable"
            engine.logHookFailure("the error classifier", e);
            return ErrorClassifier.Decision.RETRYABLE;
        }
    }
}

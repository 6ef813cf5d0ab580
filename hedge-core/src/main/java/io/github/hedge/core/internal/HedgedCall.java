package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DeadlineExceededException;
import io.github.hedge.core.DelayContext;
import io.github.hedge.core.ErrorClassifier;
import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.AttemptStarted;
import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.resilience4j.core.ContextPropagator;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * One hedged call; it is also the caller's future, so cancelling or completing it from outside
 * cancels every attempt, and the {@link DelayContext} its delay policy sees.
 *
 * <p>Decisions (start an attempt, end the call) are taken under the call's monitor, and an attempt
 * is reserved there before it runs, so a hedge timer racing a retry cannot start an extra attempt.
 * User code (attempt functions, policies, cancel hooks, listeners, the caller's dependent stages)
 * always runs outside the monitor. The hot path — a primary that wins before its delay — takes
 * the monitor twice and reads the clock three times (the reading that computes the hedge delay
 * also dates the hedge timer); a primary that answers inside {@link #start} takes no monitor and
 * reads the clock twice.
 */
final class HedgedCall<T> extends CompletableFuture<T> implements DelayContext {
    private static final int RUNNING = 0;
    private static final int DONE = 1;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(HedgedCall.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@link #pushbackUntil()} when no pushback was asked for. */
    private static final long NO_PUSHBACK = Long.MIN_VALUE;

    final Engine engine;
    final AttemptFunction<T> fn;
    final long startNanos;
    /** Also gives the call's deadline ({@link Engine#deadlineNanos}), not kept in a field of its own. */
    private final CallOptions options;
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

    /** The shortest time a primary left running for the savings sample may run on, in ns. */
    static final long MIN_SAMPLE_CAP_NANOS = 1_000_000_000L;

    /** 1 for a call that may not be hedged. */
    private final int maxAttempts;

    /**
     * RUNNING until DONE; written under the monitor (or, for a primary that completed inside {@link
     * #start()}, before the call is published). No initializer: RUNNING is the default 0, and an
     * explicit one would cost every call a volatile store (a fence).
     */
    private volatile int state;

    private int started; // guarded by this (written before the call is published for the primary)
    private Attempt<T> first; // guarded by this once published
    private Attempt<T>[] more; // attempts 2..maxAttempts, allocated by the first hedge
    private int inFlight;
    private ScheduledTask hedgeTimer;
    private ScheduledTask deadlineTimer;
    /**
     * The latest pushback's end (a ticker reading) with its sign bit flipped, so that the default 0
     * stands for {@link #NO_PUSHBACK} without an initializer (a volatile store, a fence per call);
     * read through {@link #pushbackUntil()}; written under the monitor.
     */
    private volatile long pushbackBits;

    private volatile boolean stopHedging;
    private boolean notHedgedPublished;
    /** Set while the armed hedge timer is a retry waiting out a pushback that came with a failure. */
    private boolean retryAfterPushback;
    /**
     * Set while the armed hedge timer re-checks a budget that had no token at the delay; cleared
     * when that hedge starts. Guarded by this.
     */
    private boolean budgetWait;
    /**
     * Set while the call waits in {@link Engine#awaitingDelay} for the executor's first delay (its
     * primary started before any latency was known). Written rarely (the first calls of an
     * executor), read once per call when it ends.
     */
    private volatile boolean awaitingDelay;

    private long callId;

    /**
     * Runs reserved retries with the caller's context; null when no propagator is set or the call
     * may not be hedged. Non-null exactly when hedges and retries must carry the caller's
     * thread-local context ({@link #propagate()}).
     */
    private final Runnable retryRunner;

    HedgedCall(Engine engine, AttemptFunction<T> fn, boolean idempotent, CallOptions options) {
        this.engine = engine;
        this.fn = fn;
        this.options = options;
        this.maxAttempts = idempotent ? engine.maxAttempts : 1;
        this.startNanos = engine.ticker.nanoTime();
        // the context must be retrieved here, on the caller's thread
        this.retryRunner = !engine.propagators.isEmpty() && maxAttempts > 1
                ? ContextPropagator.decorateRunnable(engine.propagators, this::runReservedRetries)
                : null;
    }

    /** @return whether hedges and retries must carry the caller's thread-local context */
    private boolean propagate() {
        return retryRunner != null;
    }

    // ---------------------------------------------------------------- start

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

    // ---------------------------------------------------------------- attempts

    private Attempt<T> attempt(int number) {
        return number == 1 ? first : more[number - 2];
    }

    /** Registers attempt {@code started + 1} under the monitor; the caller runs it outside. */
    private Attempt<T> reserveLocked(long now) {
        int number = started + 1;
        Attempt<T> a = new Attempt<>(this, number, now, triedTargetsLocked(number));
        if (more == null) {
            @SuppressWarnings("unchecked")
            Attempt<T>[] array = (Attempt<T>[]) new Attempt<?>[maxAttempts - 1];
            more = array;
        }
        more[number - 2] = a;
        started = number;
        inFlight++;
        // counted when reserved, as its budget token is: attempts = calls + hedges sent, and an
        // attempt cancelled before it could start still ends (so pending attempts stay exact)
        engine.hedgesSent.increment();
        return a;
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
    private void run(Attempt<T> a) {
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

    private List<String> triedTargetsLocked(int before) {
        List<String> out = null;
        for (int i = 1; i < before; i++) {
            String t = attempt(i).target;
            if (t != null) {
                if (out == null) {
                    out = new ArrayList<>(before);
                }
                out.add(t);
            }
        }
        return out == null ? List.of() : List.copyOf(out);
    }

    // ---------------------------------------------------------------- hedge timer

    /**
     * Queues the call to wait for the executor's first delay, unless it has ended: under the
     * monitor, so {@link #finish} either sees it queued or it is not queued at all.
     */
    private boolean queueForFirstDelay() {
        synchronized (this) {
            if (state != DONE) {
                awaitingDelay = true;
                engine.awaitingDelay.add(this);
                return true;
            }
        }
        engine.leftAwaitingDelay();
        return false;
    }

    /** @return whether this thread took the call out of the wait for the first delay */
    private synchronized boolean takeAwaitingDelay() {
        if (!awaitingDelay) {
            return false;
        }
        awaitingDelay = false;
        return true;
    }

    /**
     * The executor has latency now (an attempt answered): ask the policy again for a call whose
     * primary started before it had any, and arm the hedge timer from the primary's start, so a
     * primary that has run past the new delay is hedged at once. Called by the thread that polled
     * the call from {@link Engine#awaitingDelay}.
     */
    void onFirstDelay() {
        if (state == DONE || !takeAwaitingDelay()) {
            return; // it ended, and finish() accounts for it
        }
        armHedgeTimer(first);
    }

    /** After attempt {@code prev} started: ask the policy for the next delay and arm the timer. */
    private void armHedgeTimer(Attempt<T> prev) {
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
            publishNotHedged(NotHedged.Reason.PUSHBACK);
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
    private boolean scheduleHedgeTimer(Attempt<T> prev, long now, long delayNanos) {
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
     * but deferred: the call joins the executor's queue of {@link DeferredHedges}, which hands each
     * token to the call that has waited longest as soon as a primary deposits it, so a call stuck on
     * a stalled replica is not starved by the fresh hedges of the steady load. The timer is re-armed
     * as a backstop that drains the queue again after half the time the call has waited (at least
     * {@link #MIN_BUDGET_RECHECK_NANOS}); with a budget given in the configuration, which other
     * executors may share and fill, after at most {@link #MAX_BUDGET_RECHECK_NANOS} or an eighth of
     * the wait from 20 ms of waiting on, since their primaries' deposits do not drain this queue. The
     * budget still grants every hedge, so the extra load is capped as before.
     */
    void onHedgeTimer(Attempt<T> prev) {
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
                        long waited = now - prev.startNanos;
                        wait = engine.budgetOwned
                                ? Math.max(MIN_BUDGET_RECHECK_NANOS, waited / 2)
                                : Math.max(
                                        MIN_BUDGET_RECHECK_NANOS,
                                        Math.min(waited / 2, Math.max(MAX_BUDGET_RECHECK_NANOS, waited / 8)));
                        prev.hedgeDelayNanos = now - prev.startNanos + wait;
                    } else {
                        leftQueue = budgetWait;
                        budgetWait = false;
                    }
                }
            }
        }
        if (leftQueue) {
            engine.deferred.remove(this);
        }
        if (stop) {
            publishNotHedged(NotHedged.Reason.PUSHBACK);
        } else if (wait >= 0) {
            if (!scheduleHedgeTimer(prev, now, wait)) {
                refusedIfBudgetWait();
                endIfIdle();
                return;
            }
            if (queue && !engine.deferred.contains(this)) { // else it keeps its place, and the drain above ran
                boolean added = false;
                try {
                    engine.deferred.add(this, waiter(prev));
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
                        engine.deferred.remove(this);
                    } else {
                        engine.deferred.drainSoon(); // a token may have come meanwhile, or it is first in line
                    }
                }
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
    boolean grantDeferred(Attempt<T> prev) {
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
     * The timer armed after {@code prev} was dropped by a closing scheduler: no hedge; and if it was
     * a retry waiting out a pushback with nothing in flight, the call ends now.
     */
    void onHedgeTimerDiscarded(Attempt<T> prev) {
        synchronized (this) {
            if (state == DONE || started != prev.number) {
                return;
            }
            hedgeTimer = null;
            retryAfterPushback = false;
            budgetWait = false; // not the budget's doing any more
        }
        engine.deferred.remove(this);
        engine.logSchedulerFailure(new RejectedExecutionException("scheduler closed with a hedge timer pending"));
        publishNotHedged(NotHedged.Reason.SCHEDULER_REJECTED);
        endIfIdle();
    }

    /** The deadline timer was dropped by a closing scheduler: the call cannot be bounded, so it ends now. */
    private void onDeadlineDiscarded() {
        RejectedExecutionException e = new RejectedExecutionException(
                "the scheduler of hedged executor '" + engine.name + "' was closed before this call's deadline");
        engine.logSchedulerFailure(e);
        publishNotHedged(NotHedged.Reason.SCHEDULER_REJECTED);
        terminate(CallCompleted.CallOutcome.FAILURE, e, true);
    }

    /**
     * No further attempt will start (its timer could not be armed, was dropped, or the budget or a
     * stop refused it): if no attempt runs either, nothing can answer the call any more, so it fails
     * now with the primary's failure.
     */
    private void endIfIdle() {
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
        super.completeExceptionally(failure);
    }

    private void startHedge(Attempt<T> a, HedgeSent.Reason reason, long delayNanos) {
        if (engine.events.hasListeners(HedgeSent.class)) {
            engine.events.publish(new HedgeSent(engine.name, callId(), a.number, reason, delayNanos, a.startNanos));
        }
        run(a);
        armHedgeTimer(a);
    }

    /** Starts the retries reserved by failures, in order. */
    private void runReservedRetries() {
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

    /**
     * The budget refused attempt {@code number} for good: counted in {@code budgetDenied}, and
     * {@link BudgetExhausted} and {@code NotHedged} published. A hedge that waits for a token is not
     * refused yet: it is counted here only if the call ends before a token comes.
     */
    private void refusedByBudget(int number) {
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
    private void refusedIfBudgetWait() {
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
        engine.deferred.remove(this);
        refusedByBudget(number);
    }

    private void publishNotHedged(NotHedged.Reason reason) {
        if (!engine.events.hasListeners(NotHedged.class)) {
            return;
        }
        synchronized (this) {
            if (notHedgedPublished) {
                return;
            }
            notHedgedPublished = true;
        }
        engine.events.publish(new NotHedged(engine.name, callId(), reason, engine.ticker.nanoTime()));
    }

    // ---------------------------------------------------------------- outcomes

    /**
     * The primary returned an already successful stage, inside {@link #start()}: no other thread
     * can decide this call yet (the caller has not got it, no timer is armed, no other attempt
     * exists), so it ends without taking the monitor, and its state and the attempt's move by
     * release stores rather than a CAS and a volatile store (fences): {@code super.complete} below
     * publishes them with the call.
     */
    private void wonSynchronously(Attempt<T> a, T value) {
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
        super.complete(value);
    }

    /** Called once per attempt with its outcome (directly or as its stage's callback). */
    void onAttemptDone(Attempt<T> a, T value, Throwable error) {
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
            super.complete(value);
        } else {
            engine.failures.increment();
            finish(CallCompleted.CallOutcome.FAILURE, 0, now);
            super.completeExceptionally(failure);
        }
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

    /** Attempts still running; from now on none is in flight. */
    private List<Attempt<T>> runningLocked() {
        List<Attempt<T>> out = null;
        if (inFlight > 0) {
            for (int i = 1; i <= started; i++) {
                Attempt<T> o = attempt(i);
                if (o.isRunning()) {
                    if (out == null) {
                        out = new ArrayList<>(2);
                    }
                    out.add(o);
                }
            }
        }
        inFlight = 0;
        return out;
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

    private static void cancel(ScheduledTask t) {
        if (t != null) {
            t.cancel();
        }
    }

    private void onDeadline() {
        int attemptsStarted;
        synchronized (this) {
            attemptsStarted = started;
        }
        terminate(
                CallCompleted.CallOutcome.DEADLINE_EXCEEDED,
                new DeadlineExceededException(engine.name, engine.deadlineNanos(options), attemptsStarted),
                true);
    }

    /** The caller completed or cancelled this future: stop everything. */
    private void endedFromOutside() {
        terminate(CallCompleted.CallOutcome.CANCELLED, null, false);
    }

    /**
     * Ends the call for a reason outside its attempts (the deadline, a scheduler that refused the
     * deadline timer, the caller): cancels every timer and running attempt and, unless the caller
     * ended it, fails the caller's future with {@code error} (with the attempt failures so far
     * suppressed when {@code ownError}: an exception this executor created).
     */
    private void terminate(CallCompleted.CallOutcome outcome, Throwable error, boolean ownError) {
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
            super.completeExceptionally(error);
        }
    }

    /**
     * Publishes CallCompleted with the per-attempt trace, when a listener wants it: the trace is
     * built from the attempts only then, so a listener that wants only slow calls costs a fast call
     * one comparison.
     */
    private void finish(CallCompleted.CallOutcome outcome, int winner, long now) {
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

    /** The call's id, assigned when the first event needs it (no shared counter on the hot path). */
    synchronized long callId() {
        if (callId == 0) {
            callId = engine.nextCallId();
        }
        return callId;
    }

    // ---------------------------------------------------------------- pushback (from AttemptContext)

    void pushback(long delayNanos) {
        // bounded so the sum cannot overflow: no server asks for more than a day
        long until = engine.ticker.nanoTime() + Math.min(Math.max(0, delayNanos), 86_400_000_000_000L);
        synchronized (this) {
            long current = pushbackUntil();
            if (current == NO_PUSHBACK || until - current > 0) {
                pushbackBits = until ^ NO_PUSHBACK;
            }
        }
    }

    /** @return when the latest pushback ends (a ticker reading), or {@link #NO_PUSHBACK} */
    private long pushbackUntil() {
        return pushbackBits ^ NO_PUSHBACK;
    }

    void stopFurtherAttempts() {
        ScheduledTask t;
        synchronized (this) {
            stopHedging = true;
            t = hedgeTimer;
            hedgeTimer = null;
        }
        if (t != null && t.cancel()) {
            publishNotHedged(NotHedged.Reason.PUSHBACK);
        }
    }

    // ---------------------------------------------------------------- DelayContext (for the policy)

    @Override
    public synchronized int attemptNumber() {
        return started + 1;
    }

    @Override
    public synchronized List<String> triedTargets() {
        return triedTargetsLocked(started + 1);
    }

    @Override
    public String previousTarget() {
        Attempt<T> last;
        synchronized (this) {
            last = attempt(started);
        }
        return last.target;
    }

    @Override
    public double budgetFill() {
        return engine.budget.fill();
    }

    @Override
    public double budgetRatio() {
        return engine.budget.ratio();
    }

    @Override
    public LatencyTracker latency() {
        return engine.tracker;
    }

    // ---------------------------------------------------------------- the caller's future

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean r = super.cancel(mayInterruptIfRunning);
        if (r) {
            endedFromOutside();
        }
        return r;
    }

    @Override
    public boolean complete(T value) {
        boolean r = super.complete(value);
        if (r) {
            endedFromOutside();
        }
        return r;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean r = super.completeExceptionally(ex);
        if (r) {
            endedFromOutside();
        }
        return r;
    }

    @Override
    public void obtrudeValue(T value) {
        super.obtrudeValue(value);
        endedFromOutside();
    }

    @Override
    public void obtrudeException(Throwable ex) {
        super.obtrudeException(ex);
        endedFromOutside();
    }

    /**
     * Completes the call with the supplier's value, computed on {@code executor}; like every other
     * completion from outside, it cancels the attempts. The JDK's implementation completes the
     * future without going through {@link #complete}, hence this override.
     */
    @Override
    public CompletableFuture<T> completeAsync(java.util.function.Supplier<? extends T> supplier, Executor executor) {
        if (supplier == null || executor == null) {
            throw new NullPointerException();
        }
        executor.execute(() -> {
            if (isDone()) {
                return;
            }
            try {
                complete(supplier.get());
            } catch (Throwable t) {
                completeExceptionally(t);
            }
        });
        return this;
    }

    @Override
    public CompletableFuture<T> completeAsync(java.util.function.Supplier<? extends T> supplier) {
        return completeAsync(supplier, defaultExecutor());
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }

    @Override
    public String toString() {
        return "HedgedCall{" + engine.name + ", " + super.toString() + "}";
    }

    /**
     * The attempt's own exception: a {@link CompletionException} with a cause is the wrapper {@code
     * CompletableFuture} puts around a dependent stage's failure, so one such layer is removed;
     * nothing else is (an {@code ExecutionException} the user's code threw is its answer).
     */
    static Throwable unwrap(Throwable t) {
        if (t instanceof CompletionException) {
            try {
                Throwable cause = t.getCause();
                return cause != null ? cause : t;
            } catch (Throwable hostile) { // NOPMD: a foreign exception whose getCause() throws
                return t;
            }
        }
        return t;
    }
}

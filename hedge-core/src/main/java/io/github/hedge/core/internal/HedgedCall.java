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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/**
 * One hedged call; it is also the caller's future, so cancelling or completing it from outside
 * cancels every attempt. Decisions are taken under the call's monitor; user code (attempt
 * functions, cancel hooks, listeners, the caller's dependent stages) always runs outside it.
 */
final class HedgedCall<T> extends CompletableFuture<T> {
    private static final int RUNNING = 0;
    private static final int DONE = 1;

    final Engine engine;
    final AttemptFunction<T> fn;
    final boolean idempotent;
    final long deadlineNanos;
    final CallOptions options;
    final long callId;
    final long startNanos;

    // guarded by this
    private final Attempt<T>[] attempts;
    private int started;
    private int inFlight;
    private int state = RUNNING;
    private ScheduledTask hedgeTimer;
    private ScheduledTask deadlineTimer;
    private long pushbackUntilNanos = Long.MIN_VALUE;
    private boolean stopHedging;
    private boolean notHedgedPublished;
    private long lastDelayNanos;
    private int timerGeneration;

    /** Whether hedges and retries must carry the caller's thread-local context. */
    private final boolean propagate;

    /** Starts a retry with the caller's context; null when no propagator is set (then no allocation). */
    private final Runnable retryStarter;

    @SuppressWarnings("unchecked")
    HedgedCall(Engine engine, AttemptFunction<T> fn, boolean idempotent, long deadlineNanos, CallOptions options) {
        this.engine = engine;
        this.fn = fn;
        this.idempotent = idempotent;
        this.deadlineNanos = deadlineNanos;
        this.options = options;
        this.callId = engine.nextCallId();
        this.startNanos = engine.ticker.nanoTime();
        int slots = idempotent ? engine.maxAttempts : 1;
        this.attempts = (Attempt<T>[]) new Attempt<?>[slots];
        this.propagate = !engine.propagators.isEmpty() && slots > 1;
        // context must be retrieved here, on the caller's thread
        this.retryStarter = propagate ? ContextPropagator.decorateRunnable(engine.propagators, this::onRetry) : null;
    }

    // ---------------------------------------------------------------- start

    void start() {
        engine.calls.increment();
        engine.inFlightCalls.increment();
        boolean hedgeable = idempotent && engine.maxAttempts > 1;
        if (hedgeable) {
            engine.budget.recordPrimary();
        } else if (engine.maxAttempts > 1) {
            engine.noteNonIdempotent();
            publishNotHedged(NotHedged.Reason.NON_IDEMPOTENT);
        }
        Attempt<T> primary = launch(1);
        if (primary == null) {
            return;
        }
        // arm timers only if the primary has not already decided the call
        if (deadlineNanos > 0 && !isDoneInternal()) {
            ScheduledTask t = engine.scheduler.schedule(this::onDeadline, deadlineNanos);
            storeTimer(t, true);
        }
        if (hedgeable) {
            armHedgeTimer(primary);
        }
    }

    private synchronized boolean isDoneInternal() {
        return state == DONE;
    }

    /** Stores a timer, or cancels it at once if the call ended meanwhile. */
    private void storeTimer(ScheduledTask t, boolean deadline) {
        boolean cancelNow;
        synchronized (this) {
            cancelNow = state == DONE;
            if (!cancelNow) {
                if (deadline) {
                    deadlineTimer = t;
                } else {
                    hedgeTimer = t;
                }
            }
        }
        if (cancelNow) {
            t.cancel();
        }
    }

    /** After attempt {@code prev} started: decide the delay before the next one and arm its timer. */
    private void armHedgeTimer(Attempt<T> prev) {
        int next = prev.number + 1;
        boolean stop;
        synchronized (this) {
            if (state == DONE || started >= next) {
                return;
            }
            if (next > attempts.length) {
                stop = false;
                next = -1;
            } else {
                stop = stopHedging;
            }
        }
        if (next < 0) {
            if (attempts.length > 1) {
                publishNotHedged(NotHedged.Reason.MAX_ATTEMPTS);
            }
            return;
        }
        if (stop) {
            publishNotHedged(NotHedged.Reason.PUSHBACK);
            return;
        }
        // policies are user code: asked outside the lock
        long delay = engine.delayNanos(new Ctx(next, prev.triedIncludingSelf()));
        if (delay < 0) {
            publishNotHedged(NotHedged.Reason.POLICY_DECLINED);
            return;
        }
        long now = engine.ticker.nanoTime();
        int gen;
        synchronized (this) {
            if (state == DONE || started >= next) {
                return;
            }
            // the delay counts from the previous attempt's start; pushback may stretch it
            long due = Math.max(prev.startNanos + delay, pushbackUntilNanos);
            delay = Math.max(0, due - now);
            lastDelayNanos = Math.max(0, due - prev.startNanos);
            gen = ++timerGeneration;
        }
        scheduleHedgeTimer(gen, delay);
    }

    /**
     * Arms the hedge timer of generation {@code gen}. A timer whose generation is no longer current
     * (a retry started the attempt it was armed for) does nothing when it fires.
     */
    private void scheduleHedgeTimer(int gen, long delayNanos) {
        Runnable fire = () -> onHedgeTimer(gen);
        if (propagate) {
            fire = ContextPropagator.decorateRunnable(engine.propagators, fire);
        }
        storeTimer(engine.scheduler.schedule(fire, delayNanos), false);
    }

    // ---------------------------------------------------------------- attempts

    /**
     * Registers and starts attempt {@code number}. Returns null if the call ended first.
     */
    private Attempt<T> launch(int number) {
        Attempt<T> a;
        synchronized (this) {
            if (state == DONE || started >= number || number > attempts.length) {
                return null;
            }
            a = new Attempt<>(this, number, engine.ticker.nanoTime(), triedTargetsLocked());
            attempts[number - 1] = a;
            started = number;
            inFlight++;
        }
        engine.attempts.increment();
        engine.pendingAttempts.increment();
        if (number > 1) {
            engine.hedgesSent.increment();
        }
        if (engine.events.hasListeners()) {
            engine.events.publish(new AttemptStarted(engine.name, callId, number, a.startNanos));
        }
        CompletionStage<T> stage;
        try {
            stage = fn.start(a);
            if (stage == null) {
                throw new NullPointerException("attempt function returned null instead of a CompletionStage");
            }
        } catch (Throwable t) {
            onAttemptDone(a, null, t);
            return a;
        }
        a.attach(stage);
        if (stage instanceof CompletableFuture<T> cf && cf.isDone()) {
            // already completed: no callback to register
            T value = null;
            Throwable error = null;
            try {
                value = cf.getNow(null);
            } catch (Throwable t) {
                error = t;
            }
            onAttemptDone(a, value, error);
        } else {
            stage.whenComplete(a);
        }
        return a;
    }

    private List<String> triedTargetsLocked() {
        List<String> out = null;
        for (int i = 0; i < started; i++) {
            Attempt<T> p = attempts[i];
            String t = p == null ? null : p.target;
            if (t != null) {
                if (out == null) {
                    out = new ArrayList<>(started);
                }
                out.add(t);
            }
        }
        return out == null ? List.of() : List.copyOf(out);
    }

    synchronized List<String> triedTargetsBefore(int number) {
        List<String> out = new ArrayList<>(number);
        for (int i = 0; i < number - 1 && i < started; i++) {
            String t = attempts[i] == null ? null : attempts[i].target;
            if (t != null) {
                out.add(t);
            }
        }
        return List.copyOf(out);
    }

    private void onHedgeTimer(int gen) {
        int next;
        long wait = -1;
        boolean stop = false;
        synchronized (this) {
            if (state == DONE || gen != timerGeneration) {
                return;
            }
            hedgeTimer = null;
            next = started + 1;
            if (next > attempts.length) {
                return;
            }
            if (stopHedging) {
                stop = true;
            } else {
                long now = engine.ticker.nanoTime();
                if (pushbackUntilNanos > now) {
                    // pushback arrived after the timer was armed: wait it out
                    wait = pushbackUntilNanos - now;
                }
            }
        }
        if (stop) {
            publishNotHedged(NotHedged.Reason.PUSHBACK);
            return;
        }
        if (wait >= 0) {
            scheduleHedgeTimer(gen, wait);
            return;
        }
        if (!engine.budget.tryAcquire()) {
            denied(next);
            return;
        }
        long delay;
        synchronized (this) {
            delay = lastDelayNanos;
        }
        startHedge(next, HedgeSent.Reason.DELAY_ELAPSED, delay);
    }

    private void onRetry() {
        int next;
        synchronized (this) {
            if (state == DONE) {
                return;
            }
            next = started + 1;
        }
        startHedge(next, HedgeSent.Reason.PREVIOUS_FAILED, 0);
    }

    private void startHedge(int number, HedgeSent.Reason reason, long delayNanos) {
        if (engine.events.hasListeners()) {
            engine.events.publish(
                    new HedgeSent(engine.name, callId, number, reason, delayNanos, engine.ticker.nanoTime()));
        }
        Attempt<T> a = launch(number);
        if (a != null) {
            armHedgeTimer(a);
        }
    }

    private void denied(int number) {
        engine.budgetDenied.increment();
        if (engine.events.hasListeners()) {
            engine.events.publish(new BudgetExhausted(engine.name, callId, number, engine.ticker.nanoTime()));
        }
        publishNotHedged(NotHedged.Reason.BUDGET_EXHAUSTED);
    }

    private void publishNotHedged(NotHedged.Reason reason) {
        synchronized (this) {
            if (notHedgedPublished) {
                return;
            }
            notHedgedPublished = true;
        }
        if (engine.events.hasListeners()) {
            engine.events.publish(new NotHedged(engine.name, callId, reason, engine.ticker.nanoTime()));
        }
    }

    // ---------------------------------------------------------------- outcomes

    /** Called once per attempt with its outcome (directly or as its stage's callback). */
    void onAttemptDone(Attempt<T> a, T value, Throwable error) {
        long now = engine.ticker.nanoTime();
        Throwable cause = unwrap(error);
        if (!a.finish(error == null ? Attempt.SUCCEEDED : Attempt.FAILED, now, cause)) {
            return; // it was cancelled first: a loser, already accounted for
        }
        engine.pendingAttempts.decrement();
        if (error == null) {
            engine.tracker.record(a.target, now - a.startNanos);
        }
        ErrorClassifier.Decision decision = error == null ? null : classify(cause);
        List<Attempt<T>> losers = null;
        ScheduledTask[] timers = null;
        Throwable failure = null;
        boolean win = false;
        boolean retry = false;
        int deniedNumber = 0;
        synchronized (this) {
            inFlight--;
            if (state == DONE) {
                return;
            }
            if (error == null) {
                win = true;
            } else {
                boolean fatal = decision == ErrorClassifier.Decision.FATAL;
                if (!fatal && idempotent && !stopHedging && started < attempts.length) {
                    if (engine.budget.tryAcquire()) {
                        retry = true;
                        // the next attempt starts now; its own timer replaces the pending one
                        timers = new ScheduledTask[] {hedgeTimer};
                        hedgeTimer = null;
                        timerGeneration++;
                    } else {
                        deniedNumber = started + 1;
                    }
                }
                if (!retry) {
                    if (fatal) {
                        failure = cause;
                        attachOthersLocked(failure, a);
                    } else if (inFlight == 0) {
                        failure = primaryFailureLocked();
                    }
                    // else: others still run, and a failure never wins while one of them may succeed
                }
            }
            if (win || failure != null) {
                state = DONE;
                losers = runningLocked();
                timers = new ScheduledTask[] {hedgeTimer, deadlineTimer};
                hedgeTimer = null;
                deadlineTimer = null;
            }
        }
        cancelTimers(timers);
        if (deniedNumber > 0) {
            denied(deniedNumber);
        }
        if (retry) {
            if (retryStarter != null) {
                retryStarter.run();
            } else {
                onRetry();
            }
            return;
        }
        if (!win && failure == null) {
            return;
        }
        cancelAll(losers, now);
        if (win) {
            if (a.number > 1) {
                engine.hedgesWon.increment();
                if (engine.events.hasListeners()) {
                    engine.events.publish(new HedgeWon(engine.name, callId, a.number, a.target, now));
                }
            }
            engine.successes.increment();
            finish(CallCompleted.CallOutcome.SUCCESS, a.number, now);
            super.complete(value);
        } else {
            engine.failures.increment();
            finish(CallCompleted.CallOutcome.FAILURE, 0, now);
            super.completeExceptionally(failure);
        }
    }

    private ErrorClassifier.Decision classify(Throwable cause) {
        try {
            ErrorClassifier.Decision d = engine.classifier.classify(cause);
            return d == null ? ErrorClassifier.Decision.RETRYABLE : d;
        } catch (RuntimeException e) {
            return ErrorClassifier.Decision.RETRYABLE;
        }
    }

    /** The primary's failure with every other attempt's failure suppressed. */
    private Throwable primaryFailureLocked() {
        Attempt<T> primary = attempts[0];
        Throwable main = primary.error;
        for (int i = 1; i < started; i++) {
            Attempt<T> o = attempts[i];
            if (o != null && o.error != null && o.error != main) {
                main.addSuppressed(o.error);
            }
        }
        return main;
    }

    private void attachOthersLocked(Throwable main, Attempt<T> except) {
        for (int i = 0; i < started; i++) {
            Attempt<T> o = attempts[i];
            if (o != null && o != except && o.error != null && o.error != main) {
                main.addSuppressed(o.error);
            }
        }
    }

    private List<Attempt<T>> runningLocked() {
        List<Attempt<T>> out = null;
        for (int i = 0; i < started; i++) {
            Attempt<T> o = attempts[i];
            if (o != null && o.isRunning()) {
                if (out == null) {
                    out = new ArrayList<>(2);
                }
                out.add(o);
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
            if (o.cancel(now)) {
                engine.pendingAttempts.decrement();
                // a cancelled loser ran at least this long: its censored latency keeps the estimate honest
                engine.tracker.record(o.target, now - o.startNanos);
            }
        }
    }

    private static void cancelTimers(ScheduledTask[] timers) {
        if (timers == null) {
            return;
        }
        for (ScheduledTask t : timers) {
            if (t != null) {
                t.cancel();
            }
        }
    }

    private void onDeadline() {
        List<Attempt<T>> running;
        ScheduledTask hedge;
        DeadlineExceededException ex;
        long now = engine.ticker.nanoTime();
        synchronized (this) {
            deadlineTimer = null;
            if (state == DONE) {
                return;
            }
            state = DONE;
            ex = new DeadlineExceededException(engine.name, deadlineNanos, started);
            attachOthersLocked(ex, null);
            running = runningLocked();
            hedge = hedgeTimer;
            hedgeTimer = null;
        }
        if (hedge != null) {
            hedge.cancel();
        }
        cancelAll(running, now);
        engine.deadlineExceeded.increment();
        finish(CallCompleted.CallOutcome.DEADLINE_EXCEEDED, 0, now);
        super.completeExceptionally(ex);
    }

    /** The caller completed or cancelled this future: stop everything. */
    private void endedFromOutside(boolean cancelled) {
        List<Attempt<T>> running;
        ScheduledTask[] timers;
        long now = engine.ticker.nanoTime();
        synchronized (this) {
            if (state == DONE) {
                return;
            }
            state = DONE;
            running = runningLocked();
            timers = new ScheduledTask[] {hedgeTimer, deadlineTimer};
            hedgeTimer = null;
            deadlineTimer = null;
        }
        cancelTimers(timers);
        cancelAll(running, now);
        engine.cancelled.increment();
        finish(CallCompleted.CallOutcome.CANCELLED, 0, now);
    }

    /** Common end of a call: counters and the CallCompleted event with the per-attempt trace. */
    private void finish(CallCompleted.CallOutcome outcome, int winner, long now) {
        engine.inFlightCalls.decrement();
        if (!engine.events.hasListeners()) {
            return;
        }
        List<AttemptRecord> trace;
        synchronized (this) {
            trace = new ArrayList<>(started);
            for (int i = 0; i < started; i++) {
                Attempt<T> o = attempts[i];
                if (o != null) {
                    trace.add(o.record(startNanos, now, o.number == winner));
                }
            }
        }
        engine.events.publish(new CallCompleted(
                engine.name,
                callId,
                outcome,
                now - startNanos,
                winner,
                trace,
                options.operation(),
                options.details(),
                now));
    }

    // ---------------------------------------------------------------- pushback (from AttemptContext)

    void pushback(long delayNanos) {
        long until = engine.ticker.nanoTime() + Math.max(0, delayNanos);
        synchronized (this) {
            if (until > pushbackUntilNanos) {
                pushbackUntilNanos = until;
            }
        }
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

    // ---------------------------------------------------------------- the caller's future

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean r = super.cancel(mayInterruptIfRunning);
        if (r) {
            endedFromOutside(true);
        }
        return r;
    }

    @Override
    public boolean complete(T value) {
        boolean r = super.complete(value);
        if (r) {
            endedFromOutside(false);
        }
        return r;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean r = super.completeExceptionally(ex);
        if (r) {
            endedFromOutside(ex instanceof CancellationException);
        }
        return r;
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }

    @Override
    public String toString() {
        return "HedgedCall{" + engine.name + "#" + callId + ", " + super.toString() + "}";
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** The delay context of one decision: cheap, reads the call's tried targets. */
    private final class Ctx implements DelayContext {
        private final int number;
        private final List<String> tried;

        Ctx(int number, List<String> tried) {
            this.number = number;
            this.tried = tried;
        }

        @Override
        public int attemptNumber() {
            return number;
        }

        @Override
        public List<String> triedTargets() {
            return tried;
        }

        @Override
        public LatencyTracker latency() {
            return engine.tracker;
        }
    }
}

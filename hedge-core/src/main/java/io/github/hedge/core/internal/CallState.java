package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayContext;
import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.resilience4j.core.ContextPropagator;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;

/**
 * The second layer of a {@link HedgedCall}: every field of the call, the register of its attempts,
 * the pushback a server asked for, and the {@link DelayContext} its delay policy sees. The layers
 * above hold the decisions; all of them are one object, so a call allocates nothing per layer and
 * has one monitor.
 *
 * <p>Fields marked "guarded" are read and written under the call's monitor ({@code this}).
 */
abstract class CallState<T> extends CallerFuture<T> implements DelayContext {
    static final int RUNNING = 0;
    static final int DONE = 1;
    static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(CallState.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@link #pushbackUntil()} when no pushback was asked for. */
    static final long NO_PUSHBACK = Long.MIN_VALUE;

    final Engine engine;
    final AttemptFunction<T> fn;
    final long startNanos;
    /** Also gives the call's deadline ({@link Engine#deadlineNanos}), not kept in a field of its own. */
    final CallOptions options;

    /** 1 for a call that may not be hedged. */
    final int maxAttempts;

    /**
     * RUNNING until DONE; written under the monitor (or, for a primary that completed inside {@link
     * HedgedCall#start}, before the call is published). No initializer: RUNNING is the default 0,
     * and an explicit one would cost every call a volatile store (a fence).
     */
    volatile int state;

    int started; // guarded by this (written before the call is published for the primary)
    Attempt<T> first; // guarded by this once published
    Attempt<T>[] more; // attempts 2..maxAttempts, allocated by the first hedge
    int inFlight;
    ScheduledTask hedgeTimer;
    ScheduledTask deadlineTimer;
    /**
     * The latest pushback's end (a ticker reading) with its sign bit flipped, so that the default 0
     * stands for {@link #NO_PUSHBACK} without an initializer (a volatile store, a fence per call);
     * read through {@link #pushbackUntil()}; written under the monitor.
     */
    private volatile long pushbackBits;

    volatile boolean stopHedging;
    /** Why further attempts were stopped: written before {@link #stopHedging}, read after it. */
    NotHedged.Reason stopReason = NotHedged.Reason.PUSHBACK;

    private boolean notHedgedPublished;
    /** Set while the armed hedge timer is a retry waiting out a pushback that came with a failure. */
    boolean retryAfterPushback;
    /**
     * Set while the armed hedge timer re-checks a budget that had no token at the delay; cleared
     * when that hedge starts. Guarded by this.
     */
    boolean budgetWait;
    /**
     * Set while the call waits in {@link Engine#awaitingDelay} for the executor's first delay (its
     * primary started before any latency was known). Written rarely (the first calls of an
     * executor), read once per call when it ends.
     */
    volatile boolean awaitingDelay;

    private long callId;

    /**
     * Runs reserved retries with the caller's context; null when no propagator is set or the call
     * may not be hedged. Non-null exactly when hedges and retries must carry the caller's
     * thread-local context ({@link #propagate()}).
     */
    final Runnable retryRunner;

    CallState(Engine engine, AttemptFunction<T> fn, boolean idempotent, CallOptions options) {
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

    /** Starts the retries reserved by failures, in order ({@link AttemptLifecycle}). */
    abstract void runReservedRetries();

    /** @return this call as the one concrete class, for the attempts and the executor's queues */
    @SuppressWarnings("unchecked")
    final HedgedCall<T> call() {
        return (HedgedCall<T>) this;
    }

    /** @return whether hedges and retries must carry the caller's thread-local context */
    final boolean propagate() {
        return retryRunner != null;
    }

    // ---------------------------------------------------------------- the register of attempts

    final Attempt<T> attempt(int number) {
        return number == 1 ? first : more[number - 2];
    }

    /** Registers attempt {@code started + 1} under the monitor; the caller runs it outside. */
    final Attempt<T> reserveLocked(long now) {
        int number = started + 1;
        Attempt<T> a = new Attempt<>(call(), number, now, triedTargetsLocked(number));
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

    final List<String> triedTargetsLocked(int before) {
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

    /** Attempts still running; from now on none is in flight. */
    final List<Attempt<T>> runningLocked() {
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

    /** @return whether this thread took the call out of the wait for the first delay */
    final synchronized boolean takeAwaitingDelay() {
        if (!awaitingDelay) {
            return false;
        }
        awaitingDelay = false;
        return true;
    }

    // ---------------------------------------------------------------- events

    /** Publishes {@link NotHedged} once per call, when a listener wants it. */
    final void publishNotHedged(NotHedged.Reason reason) {
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

    /** The call's id, assigned when the first event needs it (no shared counter on the hot path). */
    final synchronized long callId() {
        if (callId == 0) {
            callId = engine.nextCallId();
        }
        return callId;
    }

    // ---------------------------------------------------------------- pushback (from AttemptContext)

    final void pushback(long delayNanos) {
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
    final long pushbackUntil() {
        return pushbackBits ^ NO_PUSHBACK;
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
    public double budgetSupply(long calls) {
        return engine.budget.supply(calls);
    }

    @Override
    public double budgetHedgesOver(long calls) {
        return engine.budget.hedgesOver(calls);
    }

    @Override
    public LatencyTracker latency() {
        return engine.tracker;
    }

    // ---------------------------------------------------------------- helpers

    static void cancel(ScheduledTask t) {
        if (t != null) {
            t.cancel();
        }
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

package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.ScheduledTask;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.BiConsumer;

/**
 * One attempt of a {@link HedgedCall}: the context its function sees, and the callback of its
 * stage. Its state moves once from RUNNING to SUCCEEDED, FAILED or CANCELLED, so it is counted and
 * recorded exactly once.
 */
final class Attempt<T> implements AttemptContext, BiConsumer<T, Throwable>, Runnable, Discardable {
    static final int RUNNING = 0;
    static final int SUCCEEDED = 1;
    static final int FAILED = 2;
    static final int CANCELLED = 3;

    final HedgedCall<T> call;
    /**
     * 1 for the primary; at most {@link io.github.hedge.core.HedgeConfig#MAX_ATTEMPTS_LIMIT} (16),
     * so a byte: with it the attempt takes 72 bytes instead of 80.
     */
    final byte number;

    final long startNanos;
    private final List<String> triedBefore;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Attempt.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * RUNNING (the default 0: no initializer, which would cost every attempt a volatile store, a
     * fence) until it moves once to SUCCEEDED, FAILED or CANCELLED.
     */
    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    volatile String target;
    private volatile CompletionStage<T> stage;
    private List<Runnable> hooks; // guarded by this
    // written before the state moves, read after (under the call's monitor or after the state CAS)
    // written by the thread that moved the state, after the move; read under the call's monitor or
    // by that same thread, so the monitor (or program order) publishes them
    long endNanos;
    Throwable error;
    /**
     * The delay armed after this attempt before the next, for the HedgeSent event. Plain: written
     * before the timer is queued (or under the call's monitor by the timer's thread) and read by
     * the thread the timer runs on, which the timer queue's monitor orders after the write.
     */
    long hedgeDelayNanos;
    /**
     * The timer that cancels it if it runs too long: set when this primary, beaten by a hedge, is
     * left to finish for the savings estimate (before its call's trace is built); null otherwise.
     */
    volatile ScheduledTask sampleCap;
    /** Reserved by a failure as a retry and not started yet; guarded by the call's monitor. */
    boolean retryPending;

    Attempt(HedgedCall<T> call, int number, long startNanos, List<String> triedBefore) {
        this.call = call;
        this.number = (byte) number;
        this.startNanos = startNanos;
        this.triedBefore = triedBefore;
    }

    // ------------------------------------------------------------ AttemptContext

    @Override
    public int attemptNumber() {
        return number;
    }

    @Override
    public long callId() {
        return call.callId();
    }

    @Override
    public List<String> triedTargets() {
        return triedBefore;
    }

    @Override
    public void reportTarget(String target) {
        this.target = target;
    }

    @Override
    public void onCancel(Runnable hook) {
        if (hook == null) {
            throw new NullPointerException("hook must not be null");
        }
        synchronized (this) {
            if (state != CANCELLED) {
                if (hooks == null) {
                    hooks = new ArrayList<>(2);
                }
                hooks.add(hook);
                return;
            }
        }
        runQuietly(hook, call.engine);
    }

    @Override
    public boolean isCancelled() {
        return state == CANCELLED;
    }

    @Override
    public void pushback(Duration delay) {
        if (delay == null || delay.isNegative()) {
            throw new IllegalArgumentException("pushback delay must be >= 0, was " + delay);
        }
        call.pushback(Checks.toNanosSaturated(delay));
    }

    @Override
    public void stopFurtherAttempts() {
        call.stopFurtherAttempts(NotHedged.Reason.PUSHBACK);
    }

    @Override
    public void stopFurtherAttempts(NotHedged.Reason reason) {
        call.stopFurtherAttempts(Checks.adapterStopReason(reason));
    }

    // ------------------------------------------------------------ engine side

    /** The stage the attempt function returned; if the attempt was cancelled meanwhile, cancel it now. */
    void attach(CompletionStage<T> s) {
        this.stage = s;
        if (state == CANCELLED) {
            cancelStage(s, call.engine);
        }
    }

    /** The hedge timer armed after this attempt fired. */
    @Override
    public void run() {
        call.onHedgeTimer(this);
    }

    /** The hedge timer armed after this attempt was dropped by a closing scheduler. */
    @Override
    public void discarded() {
        call.onHedgeTimerDiscarded(this);
    }

    @Override
    public void accept(T value, Throwable error) {
        call.onAttemptDone(this, value, error);
    }

    /** Moves RUNNING to SUCCEEDED or FAILED; false if it was cancelled (or finished) already. */
    boolean finish(int outcome, long now, Throwable cause) {
        if (!STATE.compareAndSet(this, RUNNING, outcome)) {
            return false;
        }
        endNanos = now;
        if (outcome == FAILED) {
            error = cause;
        }
        return true;
    }

    /**
     * Moves RUNNING to SUCCEEDED when no other thread can move this attempt: a primary whose function
     * returned a completed future, inside its call's {@code start()}, before the call is published
     * (no callback registered, no timer armed). A release store instead of a CAS; the call's
     * completion publishes it.
     */
    void succeededAlone(long now) {
        endNanos = now;
        STATE.setRelease(this, SUCCEEDED);
    }

    boolean isRunning() {
        return state == RUNNING;
    }

    /**
     * Cancels the real work: every hook, then the attempt's own future. Returns true if this call
     * moved the attempt out of RUNNING.
     */
    boolean cancel(long now) {
        List<Runnable> toRun;
        synchronized (this) {
            if (!STATE.compareAndSet(this, RUNNING, CANCELLED)) {
                return false;
            }
            endNanos = now;
            toRun = hooks;
            hooks = null;
        }
        if (toRun != null) {
            for (Runnable r : toRun) {
                runQuietly(r, call.engine);
            }
        }
        CompletionStage<T> s = stage;
        if (s != null) {
            cancelStage(s, call.engine);
        }
        return true;
    }

    /**
     * Cancels a loser's own future. A stage that is not a {@link Future} has nothing to cancel; one
     * whose {@code cancel} throws (a {@code minimalCompletionStage()}, foreign code) is ignored.
     */
    private static void cancelStage(CompletionStage<?> s, Engine engine) {
        if (s instanceof Future<?> f) {
            try {
                f.cancel(true);
            } catch (Throwable t) { // NOPMD: whatever a foreign future throws, the call goes on
                engine.logHookFailure("the cancel() of a losing attempt's future", t);
            }
        }
    }

    /** Runs a cancel hook; whatever it throws (an Error, an undeclared checked exception) is ignored. */
    private static void runQuietly(Runnable r, Engine engine) {
        try {
            r.run();
        } catch (Throwable t) { // NOPMD: a failing cancel hook must not break the call
            engine.logHookFailure("a cancel hook", t);
        }
    }

    AttemptRecord record(long callStartNanos, long callEndNanos, boolean won) {
        int s = state;
        AttemptRecord.AttemptOutcome outcome;
        long end = endNanos;
        switch (s) {
            case SUCCEEDED:
                outcome = won ? AttemptRecord.AttemptOutcome.WON : AttemptRecord.AttemptOutcome.SUCCEEDED_LATE;
                break;
            case FAILED:
                outcome = AttemptRecord.AttemptOutcome.FAILED;
                break;
            case CANCELLED:
                outcome = AttemptRecord.AttemptOutcome.CANCELLED;
                break;
            default:
                outcome = sampleCap != null
                        ? AttemptRecord.AttemptOutcome.LEFT_RUNNING
                        : AttemptRecord.AttemptOutcome.CANCELLED;
                end = callEndNanos;
        }
        Throwable e = error;
        return new AttemptRecord(
                number,
                target,
                startNanos - callStartNanos,
                Math.max(0, end - startNanos),
                outcome,
                e == null ? null : e.getClass().getName());
    }

    @Override
    public String toString() {
        return "Attempt{#" + number + ", target=" + target + ", state=" + state + "}";
    }
}

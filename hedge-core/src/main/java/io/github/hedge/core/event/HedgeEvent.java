package io.github.hedge.core.event;

/**
 * The common type of the events an executor publishes about its calls, for listeners that log,
 * count or trace them ({@link HedgeEvents}). Events are immutable values, safe to hand to any
 * thread. They never carry request payloads, bound values or credentials: only the executor's
 * name, call and attempt numbers, targets as the adapter reported them, timings and exception
 * class names.
 *
 * <p>Times are in nanoseconds from the executor's {@link io.github.hedge.core.spi.Ticker}.
 */
public sealed interface HedgeEvent
        permits AttemptStarted, HedgeSent, HedgeWon, BudgetExhausted, NotHedged, CallCompleted {
    /** @return the name of the executor (or adapter) that published the event */
    String executorName();

    /** @return a number identifying the call within its executor, unique while the JVM runs */
    long callId();

    /** @return when it happened, in ticker nanoseconds */
    long timestampNanos();
}

package io.github.hedge.core.event;

/**
 * A hedge was wanted but the hedge budget had no token for it. Immutable, so safe to share between threads; times are
 * in nanoseconds.
 *
 * @param executorName the executor's name
 * @param callId the call
 * @param attemptNumber the attempt that would have started
 * @param timestampNanos ticker time, in nanoseconds
 */
public record BudgetExhausted(String executorName, long callId, int attemptNumber, long timestampNanos)
        implements HedgeEvent {}

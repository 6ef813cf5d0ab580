package io.github.hedge.core.event;

/**
 * A hedge, not the primary, produced the call's answer. Immutable, so safe to share between threads; times are
 * in nanoseconds.
 *
 * @param executorName the executor's name
 * @param callId the call
 * @param attemptNumber the winning attempt, 2..maxAttempts
 * @param target the target the winner ran on, or {@code null} if the adapter did not report one
 * @param timestampNanos ticker time, in nanoseconds
 */
public record HedgeWon(String executorName, long callId, int attemptNumber, String target, long timestampNanos)
        implements HedgeEvent {}

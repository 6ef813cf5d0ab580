package io.github.hedge.core.event;

/**
 * A hedge (an extra attempt) was sent for a call. Immutable, so safe to share between threads; times are
 * in nanoseconds.
 *
 * @param executorName the executor's name
 * @param callId the call
 * @param attemptNumber the hedge's attempt number, 2..maxAttempts
 * @param reason why it was sent
 * @param delayNanos the delay that elapsed before it, in nanoseconds (0 when sent after a failure)
 * @param timestampNanos ticker time, in nanoseconds
 */
public record HedgeSent(
        String executorName, long callId, int attemptNumber, Reason reason, long delayNanos, long timestampNanos)
        implements HedgeEvent {
    /** Why a hedge was sent. */
    public enum Reason {
        /** the previous attempt had not answered after the delay */
        DELAY_ELAPSED,
        /** an earlier attempt failed with an error the classifier calls retryable */
        PREVIOUS_FAILED,
        /**
         * the previous attempt had not answered after the delay, but the budget had no token then;
         * the hedge waited in the executor's oldest-first queue for one and went out later, with
         * {@code delayNanos} the whole wait
         */
        BUDGET_DEFERRED
    }
}

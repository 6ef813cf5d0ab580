package io.github.hedge.core.event;

/**
 * A call, or a further attempt of it, was deliberately not hedged. Published at most once per call
 * and reason. Immutable, so safe to share between threads; times are
 * in nanoseconds.
 *
 * @param executorName the executor's name
 * @param callId the call
 * @param reason why
 * @param timestampNanos ticker time, in nanoseconds
 */
public record NotHedged(String executorName, long callId, Reason reason, long timestampNanos) implements HedgeEvent {
    /** Why no (further) hedge was sent. */
    public enum Reason {
        /** the call is not idempotent, so it runs exactly once */
        NON_IDEMPOTENT,
        /** the hedge budget had no token */
        BUDGET_EXHAUSTED,
        /** the delay policy declined: warming up without a fallback, or a custom policy said no */
        POLICY_DECLINED,
        /** maxAttempts attempts were already started */
        MAX_ATTEMPTS,
        /** the adapter relayed server pushback asking not to retry */
        PUSHBACK,
        /**
         * the adapter could not keep the request for another attempt: its body was over the adapter's
         * buffer limit (or streamed), so the call runs once
         */
        REQUEST_TOO_LARGE,
        /** the scheduler refused the hedge timer (it was closed); the call goes on unhedged */
        SCHEDULER_REJECTED,
        /**
         * the adapter has no target left that the call has not tried (every replica of a Cassandra
         * statement), so another attempt would only repeat one
         */
        NO_UNTRIED_TARGET,
        /** the adapter's client is closing, so it sends no new attempt of the call */
        CLIENT_CLOSING
    }
}

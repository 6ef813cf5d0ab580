package io.github.hedge.core.event;

/**
 * One attempt of a completed call, as it appears in {@link CallCompleted#attempts()} and in the
 * slow-call log. Immutable, so safe to share between threads; times are
 * in nanoseconds.
 *
 * @param attemptNumber 1 for the primary, 2.. for hedges
 * @param target where it ran as reported by the adapter, or {@code null}
 * @param startOffsetNanos when it started, nanoseconds after the call started
 * @param durationNanos how long it ran until it completed or was cancelled, in nanoseconds
 * @param outcome how it ended
 * @param errorType the exception's class name when it failed, else {@code null}; never the message,
 *     which may carry user data
 */
public record AttemptRecord(
        int attemptNumber,
        String target,
        long startOffsetNanos,
        long durationNanos,
        AttemptOutcome outcome,
        String errorType) {

    /** How an attempt ended. */
    public enum AttemptOutcome {
        /** it succeeded first: its result is the call's result */
        WON,
        /** it succeeded after another attempt had already won */
        SUCCEEDED_LATE,
        /** it failed */
        FAILED,
        /** it was cancelled because another attempt won, the caller cancelled, or the deadline passed */
        CANCELLED,
        /**
         * a primary beaten by a hedge and left to finish, not cancelled, so the savings estimate
         * sees its real latency ({@code HedgeConfig.Builder#loserSampling}); it was still running
         * when the call completed
         */
        LEFT_RUNNING
    }
}

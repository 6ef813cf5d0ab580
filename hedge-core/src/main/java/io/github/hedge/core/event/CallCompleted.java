package io.github.hedge.core.event;

import java.util.List;
import java.util.function.Supplier;

/**
 * A call ended, with its per-attempt trace. Adapters that hedge outside the executor (the
 * Cassandra driver runs its own speculative executions) publish this event themselves so metrics
 * and the slow-call log see their calls too.
 *
 * @param executorName the executor's name
 * @param callId the call
 * @param outcome how the call ended
 * @param totalNanos from the call's start to its end, in nanoseconds
 * @param winningAttempt the attempt whose result the caller got, or 0 if none won
 * @param attempts every attempt started, in start order; immutable
 * @param operation a low-cardinality label for the call ("getUser"), or {@code null}
 * @param details user-supplied details (a query text, say), or {@code null}; may carry user data, so
 *     logs include it only when the user opted in
 * @param timestampNanos ticker time of the end, in nanoseconds
 */
public record CallCompleted(
        String executorName,
        long callId,
        CallOutcome outcome,
        long totalNanos,
        int winningAttempt,
        List<AttemptRecord> attempts,
        String operation,
        Supplier<String> details,
        long timestampNanos)
        implements HedgeEvent {

    /** Makes the attempt list immutable. */
    public CallCompleted {
        attempts = List.copyOf(attempts);
    }

    /** @return number of attempts started beyond the primary */
    public int hedgesSent() {
        return Math.max(0, attempts.size() - 1);
    }

    /** @return whether a hedge, not the primary, produced the answer */
    public boolean hedgeWon() {
        return winningAttempt > 1;
    }

    /** How a call ended. */
    public enum CallOutcome {
        /** an attempt succeeded */
        SUCCESS,
        /** every attempt failed, or one failed fatally */
        FAILURE,
        /** the overall deadline passed first */
        DEADLINE_EXCEEDED,
        /** the caller cancelled */
        CANCELLED
    }
}

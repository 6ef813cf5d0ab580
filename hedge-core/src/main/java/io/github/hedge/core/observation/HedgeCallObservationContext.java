package io.github.hedge.core.observation;

import io.github.hedge.core.event.CallCompleted;
import io.micrometer.observation.Observation;

/**
 * What the observation of one hedged call ({@value HedgeObservations#CALL_NAME}) carries. Filled
 * in by {@link HedgeObservations}: the executor and operation when the call starts, the outcome,
 * attempt count and winner when it ends. A convention reads it to build key values.
 *
 * <p>Not thread-safe on its own; the observation hands it from thread to thread with the
 * happens-before edges of the call's completion.
 */
public class HedgeCallObservationContext extends Observation.Context {
    private final String executorName;
    private final String operation;
    private CallCompleted.CallOutcome outcome;
    private int attemptsStarted;
    private int winningAttempt;

    /**
     * @param executorName the executor's name
     * @param operation the call's low-cardinality operation label, or {@code null}
     */
    public HedgeCallObservationContext(String executorName, String operation) {
        this.executorName = executorName;
        this.operation = operation;
    }

    /** @return the executor's name */
    public String executorName() {
        return executorName;
    }

    /** @return the call's operation label ({@code CallOptions#operation()}), or {@code null} */
    public String operation() {
        return operation;
    }

    /** @return how the call ended, or {@code null} while it runs */
    public CallCompleted.CallOutcome outcome() {
        return outcome;
    }

    /** @return attempts started, the primary included; 0 while the call runs */
    public int attemptsStarted() {
        return attemptsStarted;
    }

    /** @return the number of the attempt whose result the caller got, 0 if none (or while it runs) */
    public int winningAttempt() {
        return winningAttempt;
    }

    void ended(CallCompleted call) {
        this.outcome = call.outcome();
        this.attemptsStarted = call.attempts().size();
        this.winningAttempt = call.winningAttempt();
    }
}

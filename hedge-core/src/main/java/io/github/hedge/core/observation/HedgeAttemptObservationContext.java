package io.github.hedge.core.observation;

import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeSent;
import io.micrometer.observation.Observation;

/**
 * What the observation of one attempt ({@value HedgeObservations#ATTEMPT_NAME}) carries. Filled in
 * by {@link HedgeObservations}: the executor, operation, attempt number and hedge reason when the
 * attempt starts; its outcome, target and error type when its call ends.
 *
 * <p>Not thread-safe on its own; the observation hands it from thread to thread with the
 * happens-before edges of the call's completion.
 */
public class HedgeAttemptObservationContext extends Observation.Context {
    private final String executorName;
    private final String operation;
    private final int attemptNumber;
    private final HedgeSent.Reason reason;
    private final boolean started;
    private AttemptRecord record;
    private CallCompleted.CallOutcome callOutcome;

    /**
     * @param executorName the executor's name
     * @param operation the call's operation label, or {@code null}
     * @param attemptNumber 1 for the primary, 2.. for hedges
     * @param reason why this hedge was sent; {@code null} for the primary (or when unknown)
     * @param started whether the attempt function ran; {@code false} for a hedge the call ended
     *     before it could start
     */
    public HedgeAttemptObservationContext(
            String executorName, String operation, int attemptNumber, HedgeSent.Reason reason, boolean started) {
        this.executorName = executorName;
        this.operation = operation;
        this.attemptNumber = attemptNumber;
        this.reason = reason;
        this.started = started;
    }

    /** @return the executor's name */
    public String executorName() {
        return executorName;
    }

    /** @return the call's operation label, or {@code null} */
    public String operation() {
        return operation;
    }

    /** @return 1 for the primary, 2.. for hedges */
    public int attemptNumber() {
        return attemptNumber;
    }

    /** @return why this hedge was sent; {@code null} for the primary or when unknown */
    public HedgeSent.Reason reason() {
        return reason;
    }

    /** @return whether the attempt function ran */
    public boolean started() {
        return started;
    }

    /**
     * @return the attempt as its call's trace recorded it (outcome, target, duration, error type),
     *     or {@code null} while the call runs
     */
    public AttemptRecord record() {
        return record;
    }

    /** @return how the attempt's call ended, or {@code null} while it runs */
    public CallCompleted.CallOutcome callOutcome() {
        return callOutcome;
    }

    /**
     * The attempt's outcome as the default convention names it: {@code won}, {@code failed},
     * {@code lost-cancelled} (cancelled because another attempt won), {@code cancelled} (the caller
     * cancelled or the deadline passed), {@code left-running} (a beaten primary left to finish),
     * {@code succeeded-late} (answered after another attempt won), {@code not-started} (the call
     * ended before it started), or {@code running} before its call ends.
     *
     * @return the outcome's name
     */
    public String outcomeName() {
        if (!started) {
            return "not-started";
        }
        if (record == null) {
            return "running";
        }
        switch (record.outcome()) {
            case WON:
                return "won";
            case SUCCEEDED_LATE:
                return "succeeded-late";
            case FAILED:
                return "failed";
            case LEFT_RUNNING:
                return "left-running";
            default:
                return callOutcome == CallCompleted.CallOutcome.SUCCESS ? "lost-cancelled" : "cancelled";
        }
    }

    void ended(AttemptRecord record, CallCompleted.CallOutcome callOutcome) {
        this.record = record;
        this.callOutcome = callOutcome;
    }
}

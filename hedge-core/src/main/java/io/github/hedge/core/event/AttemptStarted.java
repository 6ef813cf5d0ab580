package io.github.hedge.core.event;

/**
 * An attempt of a call started: the primary ({@code attemptNumber == 1}) or a hedge. Immutable, so safe to share between threads; times are
 * in nanoseconds.
 *
 * @param executorName the executor's name
 * @param callId the call
 * @param attemptNumber 1 for the primary, 2.. for hedges
 * @param timestampNanos ticker time of the start, in nanoseconds
 */
public record AttemptStarted(String executorName, long callId, int attemptNumber, long timestampNanos)
        implements HedgeEvent {
    /** @return whether this attempt is a hedge (not the primary) */
    public boolean isHedge() {
        return attemptNumber > 1;
    }
}

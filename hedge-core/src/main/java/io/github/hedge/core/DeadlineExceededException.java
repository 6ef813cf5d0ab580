package io.github.hedge.core;

import java.util.concurrent.TimeoutException;

/**
 * The call's overall deadline passed before any attempt succeeded; every attempt still running was
 * cancelled. Failures of attempts that ended before the deadline are attached as suppressed. The
 * deadline is in nanoseconds. Like any exception, not meant to be mutated after it is thrown.
 */
public class DeadlineExceededException extends TimeoutException {
    private static final long serialVersionUID = 1L;

    private final long deadlineNanos;

    /**
     * @param executorName the executor
     * @param deadlineNanos the deadline that passed, in nanoseconds
     * @param attemptsStarted how many attempts had started
     */
    public DeadlineExceededException(String executorName, long deadlineNanos, int attemptsStarted) {
        super("hedged call of '" + executorName + "' exceeded its deadline of "
                + java.time.Duration.ofNanos(deadlineNanos) + " after " + attemptsStarted + " attempt(s)");
        this.deadlineNanos = deadlineNanos;
    }

    /** @return the deadline that passed, in nanoseconds */
    public long deadlineNanos() {
        return deadlineNanos;
    }
}

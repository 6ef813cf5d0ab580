package io.github.hedge.core.spi;

/**
 * A handle on a task given to a {@link HedgeScheduler}. Thread-safe.
 */
public interface ScheduledTask {
    /**
     * Cancels the task if it has not run yet. Idempotent.
     *
     * @return {@code true} if this call prevented the task from running
     */
    boolean cancel();
}

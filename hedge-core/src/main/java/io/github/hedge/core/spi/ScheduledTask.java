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

    /**
     * Whether the task will still run: it has neither run nor been cancelled, and its scheduler has
     * not discarded it (a {@link ClosableHedgeScheduler} discards its pending tasks when closed).
     * The executor arms one scheduler task for many timers and trusts it only while this returns
     * {@code true}, so a scheduler that can drop a task without running it must override this;
     * otherwise calls could wait for a timer that never fires.
     *
     * @return {@code true} while the task is still due to run; the default, for schedulers that
     *     never drop a task, is {@code true}
     */
    default boolean isPending() {
        return true;
    }
}

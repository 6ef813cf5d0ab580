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
     * Whether the task will never run although it has not run: it was cancelled, or its scheduler
     * discarded it (a {@link ClosableHedgeScheduler} discards its pending tasks when closed). A
     * task that is still due, is running or has run is not dropped. The executor arms one scheduler
     * task for many timers and stops trusting it once this returns {@code true}, so a scheduler that
     * can drop a task without running it must override this; otherwise calls could wait for a timer
     * that never fires.
     *
     * @return {@code true} once the task is certain never to run; the default, for schedulers that
     *     never drop a task, is {@code false}
     */
    default boolean isDropped() {
        return false;
    }
}

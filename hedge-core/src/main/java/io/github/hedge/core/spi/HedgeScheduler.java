package io.github.hedge.core.spi;

/**
 * Runs one-shot tasks after a delay: the hedge timers and call deadlines of a
 * {@code HedgedExecutor}. Injected so tests run in virtual time ({@code VirtualTimeScheduler}) and
 * so a user can pick the implementation ({@link Schedulers}).
 *
 * <p>Tasks run on a scheduler thread and must be short: the executor only decides and starts the
 * next attempt there. Implementations must be thread-safe, must not hold a reference to a
 * cancelled task (so cancelled timers cannot leak memory) and must report how many tasks are
 * pending so leaks are observable.
 */
public interface HedgeScheduler {
    /**
     * Schedules {@code task} to run once after {@code delayNanos}.
     *
     * @param task the task; exceptions it throws are swallowed and never stop the scheduler
     * @param delayNanos the delay in nanoseconds; zero or negative runs it as soon as possible
     * @return a handle to cancel the task
     */
    ScheduledTask schedule(Runnable task, long delayNanos);

    /** @return the number of tasks scheduled that have neither run nor been cancelled */
    long pendingTasks();
}

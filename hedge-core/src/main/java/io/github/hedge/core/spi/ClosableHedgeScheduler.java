package io.github.hedge.core.spi;

/**
 * A {@link HedgeScheduler} that owns a thread and must be closed by whoever created it: the
 * schedulers of {@link Schedulers#threadPool()} and {@link Schedulers#hashedWheel(java.time.Duration)}.
 *
 * <p>{@link #close()} stops the scheduler's thread and discards the tasks still pending (they never
 * run; {@link #pendingTasks()} drops to 0); it waits for a task that is running to finish, unless
 * called from that task. It is idempotent. After it, {@link #schedule} throws
 * {@link java.util.concurrent.RejectedExecutionException}. Thread-safe.
 */
public interface ClosableHedgeScheduler extends HedgeScheduler, AutoCloseable {
    /** Stops the scheduler's thread, discarding pending tasks. Idempotent; throws no checked exception. */
    @Override
    void close();
}

package io.github.hedge.core.internal;

import io.github.hedge.core.spi.ClosableHedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A {@link io.github.hedge.core.spi.HedgeScheduler} on a {@link ScheduledThreadPoolExecutor} with one
 * daemon thread ({@code hedge-scheduler-N}), created when the first task is scheduled. Cancelled
 * tasks are removed from the queue at once ({@code removeOnCancelPolicy}), so they never accumulate.
 * Tasks fire at their due time plus the OS's timer slack (typically tens of microseconds); schedule
 * and cancel are {@code O(log n)} under one lock.
 *
 * <p>Thread-safe. A task that throws is logged and never stops the thread.
 */
public final class ThreadPoolScheduler implements ClosableHedgeScheduler {
    private final ScheduledThreadPoolExecutor executor;
    private volatile Thread thread;

    /** Creates the scheduler; its thread starts with the first task. */
    public ThreadPoolScheduler() {
        executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = SchedulerThreads.newDaemon(r);
            thread = t;
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        executor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
    }

    /** @throws RejectedExecutionException after {@link #close()} */
    @Override
    public ScheduledTask schedule(Runnable task, long delayNanos) {
        Checks.notNull("task", task);
        PoolTask t = new PoolTask(task);
        t.setFuture(executor.schedule(t, Math.max(0, delayNanos), TimeUnit.NANOSECONDS));
        return t;
    }

    @Override
    public long pendingTasks() {
        return executor.getQueue().size();
    }

    @Override
    public void close() {
        executor.shutdownNow();
        boolean interrupted = false;
        try {
            while (!executor.isTerminated() && !isSchedulerThread()) {
                try {
                    executor.awaitTermination(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean isSchedulerThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * The task and its handle. Its own state, not the future's, decides between run and cancel: a
     * {@code FutureTask} still counts as cancellable while it runs.
     */
    private final class PoolTask implements Runnable, ScheduledTask {
        private static final int WAITING = 0;
        private static final int RAN = 1;
        private static final int CANCELLED = 2;
        private static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(PoolTask.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        @SuppressWarnings("unused") // accessed through STATE
        private volatile int state;
        /** Nulled when the task runs or is cancelled, so a kept handle does not retain it. */
        private volatile Runnable task;

        private volatile ScheduledFuture<?> future;

        PoolTask(Runnable task) {
            this.task = task;
        }

        void setFuture(ScheduledFuture<?> f) {
            future = f;
            if (state == CANCELLED) {
                f.cancel(false); // cancel() came before the future was known
            }
        }

        @Override
        public void run() {
            if (STATE.compareAndSet(this, WAITING, RAN)) {
                Runnable t = task;
                task = null;
                SchedulerThreads.runGuarded(t);
            }
        }

        @Override
        public boolean isPending() {
            return state == WAITING && !executor.isShutdown();
        }

        @Override
        public boolean cancel() {
            if (!STATE.compareAndSet(this, WAITING, CANCELLED)) {
                return false;
            }
            task = null;
            ScheduledFuture<?> f = future;
            if (f != null) {
                f.cancel(false); // removes it from the queue at once
            }
            return !executor.isShutdown(); // after close() the task was discarded already
        }
    }

    @Override
    public String toString() {
        return "ThreadPoolScheduler[pending=" + pendingTasks() + "]";
    }
}

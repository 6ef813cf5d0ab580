package io.github.hedge.core.internal;

import io.github.hedge.core.spi.ClosableHedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
    /**
     * Pending tasks that want to know if they are dropped ({@link Discardable}: the timer queues'
     * armed tasks, about one per executor), so {@link #close()} can tell them. Other tasks are not
     * tracked, so they cost nothing here.
     */
    private final Set<PoolTask> discardables = ConcurrentHashMap.newKeySet();

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
        if (task instanceof Discardable) {
            discardables.add(t);
        }
        try {
            t.setFuture(executor.schedule(t, Math.max(0, delayNanos), TimeUnit.NANOSECONDS));
        } catch (RuntimeException e) {
            discardables.remove(t);
            throw e;
        }
        if (executor.isShutdown() && t.withdraw()) {
            // raced with close(), which may have dropped it after looking for tasks to tell: refuse it
            throw new RejectedExecutionException("scheduler is closed");
        }
        return t;
    }

    @Override
    public long pendingTasks() {
        return executor.getQueue().size();
    }

    @Override
    public void close() {
        executor.shutdownNow();
        // the tasks dropped are told so, so the calls waiting on them are settled
        for (PoolTask t : discardables) {
            t.discard();
        }
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
                if (t instanceof Discardable) {
                    discardables.remove(this);
                }
                SchedulerThreads.runGuarded(t);
            }
        }

        /** Dropped by {@link #close()} before it ran: tells the task. */
        void discard() {
            if (STATE.compareAndSet(this, WAITING, CANCELLED)) {
                Runnable t = task;
                task = null;
                discardables.remove(this);
                if (t instanceof Discardable d) {
                    SchedulerThreads.runGuarded(d::discarded);
                }
            }
        }

        @Override
        public boolean isDropped() {
            int s = state;
            return s == CANCELLED || (s == WAITING && executor.isShutdown());
        }

        @Override
        public boolean cancel() {
            return withdraw() && !executor.isShutdown(); // after close() the task was discarded already
        }

        /** Moves WAITING to CANCELLED and drops the task from the pool; false if it ran or was dropped. */
        boolean withdraw() {
            if (!STATE.compareAndSet(this, WAITING, CANCELLED)) {
                return false;
            }
            if (task instanceof Discardable) {
                discardables.remove(this);
            }
            task = null;
            ScheduledFuture<?> f = future;
            if (f != null) {
                f.cancel(false); // removes it from the queue at once
            }
            return true;
        }
    }

    @Override
    public String toString() {
        return "ThreadPoolScheduler[pending=" + pendingTasks() + "]";
    }
}

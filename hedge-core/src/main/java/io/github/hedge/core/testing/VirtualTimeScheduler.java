package io.github.hedge.core.testing;

import io.github.hedge.core.spi.HedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.PriorityQueue;

/**
 * A scheduler and ticker in virtual time, for tests and simulations: nothing runs until
 * {@link #advance(Duration)} or {@link #runUntilIdle()} moves the clock, and then tasks run on the
 * calling thread in due-time order (ties in scheduling order). Time starts at 0.
 *
 * <p>Pass the same instance as the executor's scheduler and ticker. Thread-safe: tasks may be
 * scheduled from any thread, but the clock should be advanced from one thread.
 */
public final class VirtualTimeScheduler implements HedgeScheduler, Ticker {
    private final PriorityQueue<Task> queue = new PriorityQueue<>();
    private long now;
    private long sequence;
    private long pending;

    /** Creates a scheduler at virtual time 0. */
    public VirtualTimeScheduler() {}

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    @Override
    public synchronized ScheduledTask schedule(Runnable task, long delayNanos) {
        long d = Math.max(0, delayNanos);
        Task t = new Task(task, now + d < now ? Long.MAX_VALUE : now + d, sequence++); // saturates
        queue.add(t);
        pending++;
        return t;
    }

    @Override
    public synchronized long pendingTasks() {
        return pending;
    }

    /** @return the due time of the next pending task, in virtual nanoseconds, or -1 if none */
    public synchronized long nextDueNanos() {
        Task t = peekLive();
        return t == null ? -1 : t.due;
    }

    /**
     * Moves the clock forward by {@code duration}, running every task that falls due on the way at
     * its own due instant.
     *
     * @param duration how far; must not be negative
     */
    public void advance(Duration duration) {
        advanceNanos(duration.toNanos());
    }

    /** @param nanos how far to move the clock, in nanoseconds; must not be negative */
    public void advanceNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("duration must be >= 0, was " + nanos + "ns");
        }
        long target;
        synchronized (this) {
            target = now + nanos;
        }
        advanceTo(target);
    }

    /**
     * Runs tasks due up to and including virtual time {@code targetNanos}, then sets the clock to it.
     *
     * @param targetNanos absolute virtual time in nanoseconds; earlier than now is ignored
     */
    public void advanceTo(long targetNanos) {
        while (true) {
            Task next;
            synchronized (this) {
                next = peekLive();
                if (next == null || next.due > targetNanos) {
                    if (targetNanos > now) {
                        now = targetNanos;
                    }
                    return;
                }
                queue.poll();
                next.state = Task.RAN;
                pending--;
                if (next.due > now) {
                    now = next.due;
                }
            }
            runQuietly(next.runnable);
        }
    }

    /** Runs pending tasks, moving the clock to each, until none is left. */
    public void runUntilIdle() {
        while (true) {
            long due = nextDueNanos();
            if (due < 0) {
                return;
            }
            advanceTo(due);
        }
    }

    private Task peekLive() {
        Task t = queue.peek();
        while (t != null && t.state == Task.CANCELLED) {
            queue.poll();
            t = queue.peek();
        }
        return t;
    }

    private static void runQuietly(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException | Error e) {
            // a failing task must not stop virtual time; the executor never lets its own tasks throw
        }
    }

    private final class Task implements ScheduledTask, Comparable<Task> {
        static final int WAITING = 0;
        static final int RAN = 1;
        static final int CANCELLED = 2;

        final Runnable runnable;
        final long due;
        final long seq;
        int state;

        Task(Runnable runnable, long due, long seq) {
            this.runnable = runnable;
            this.due = due;
            this.seq = seq;
        }

        @Override
        public boolean isDropped() {
            synchronized (VirtualTimeScheduler.this) {
                return state == CANCELLED;
            }
        }

        @Override
        public boolean cancel() {
            synchronized (VirtualTimeScheduler.this) {
                if (state != WAITING) {
                    return false;
                }
                state = CANCELLED;
                pending--;
                queue.remove(this);
                return true;
            }
        }

        @Override
        public int compareTo(Task o) {
            int c = Long.compare(due, o.due);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }
}

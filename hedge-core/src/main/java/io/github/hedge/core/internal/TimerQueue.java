package io.github.hedge.core.internal;

import io.github.hedge.core.spi.HedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.spi.Ticker;
import java.util.ArrayList;
import java.util.List;

/**
 * One executor's pending hedge timers, in due order, on top of its {@link HedgeScheduler}: the
 * scheduler holds at most one task for the whole queue (armed for the earliest due time) instead of
 * one per call. Scheduling and cancelling a timer is a short critical section on an intrusive list
 * (usually O(1): delays are nearly constant, so new timers go at the tail), and a cancelled timer is
 * unlinked at once, so the queue never holds more timers than calls waiting for a hedge.
 *
 * <p>When the queue empties the armed scheduler task is left to expire on its own (it finds nothing
 * due and arms nothing), so a stream of calls whose primaries answer before their delay costs the
 * scheduler about one task per delay period rather than a schedule and a cancel per call. A timer
 * fires on the scheduler's thread at its own due time, as precisely as the scheduler fires.
 *
 * <p>Internal; thread-safe.
 */
public final class TimerQueue {
    private final HedgeScheduler scheduler;
    private final Ticker ticker;
    private final Runnable fire = this::fire;

    // guarded by this
    private Node head;
    private Node tail;
    private long size;
    private ScheduledTask armed;
    private long armedDue;

    public TimerQueue(HedgeScheduler scheduler, Ticker ticker) {
        this.scheduler = scheduler;
        this.ticker = ticker;
    }

    /**
     * Queues {@code task} to run once after {@code delayNanos}.
     *
     * @return a handle whose {@code cancel()} unlinks it
     * @throws RuntimeException what the scheduler throws when it refuses to arm (it was closed);
     *     the timer is then not queued
     */
    public ScheduledTask schedule(Runnable task, long delayNanos) {
        long now = ticker.nanoTime();
        Node n = new Node(this, task, now + Math.max(0, delayNanos));
        synchronized (this) {
            insertLocked(n);
            if (armed == null || n.due - armedDue < 0) {
                // the earliest timer moved up: arm for it (and drop an arming for later)
                ScheduledTask previous = armed;
                try {
                    armed = scheduler.schedule(fire, n.due - now);
                } catch (RuntimeException e) {
                    unlinkLocked(n);
                    armed = previous;
                    throw e;
                }
                armedDue = n.due;
                if (previous != null) {
                    previous.cancel();
                }
            }
        }
        return n;
    }

    /** @return timers queued and neither fired nor cancelled */
    public synchronized long size() {
        return size;
    }

    private void insertLocked(Node n) {
        Node after = tail;
        while (after != null && after.due - n.due > 0) {
            after = after.prev;
        }
        n.prev = after;
        n.next = after == null ? head : after.next;
        if (after == null) {
            head = n;
        } else {
            after.next = n;
        }
        if (n.next == null) {
            tail = n;
        } else {
            n.next.prev = n;
        }
        n.queued = true;
        size++;
    }

    private void unlinkLocked(Node n) {
        if (n.prev == null) {
            head = n.next;
        } else {
            n.prev.next = n.next;
        }
        if (n.next == null) {
            tail = n.prev;
        } else {
            n.next.prev = n.prev;
        }
        n.prev = null;
        n.next = null;
        n.queued = false;
        size--;
    }

    private synchronized boolean cancel(Node n) {
        if (!n.queued) {
            return false;
        }
        unlinkLocked(n);
        n.task = null;
        return true;
    }

    /** The armed scheduler task: runs every timer due, then arms for the next one, if any. */
    private void fire() {
        List<Runnable> due = null;
        synchronized (this) {
            armed = null;
            long now = ticker.nanoTime();
            while (head != null && head.due - now <= 0) {
                Node n = head;
                unlinkLocked(n);
                if (due == null) {
                    due = new ArrayList<>(4);
                }
                due.add(n.task);
                n.task = null;
            }
            if (head != null) {
                try {
                    armed = scheduler.schedule(fire, head.due - now);
                    armedDue = head.due;
                } catch (RuntimeException e) {
                    // the scheduler was closed: nothing can fire any more; the calls go on unhedged
                }
            }
        }
        if (due != null) {
            for (Runnable r : due) {
                SchedulerThreads.runGuarded(r);
            }
        }
    }

    /** A queued timer; its own handle. */
    private static final class Node implements ScheduledTask {
        final TimerQueue queue;
        final long due;
        Runnable task; // guarded by the queue
        Node prev; // guarded by the queue
        Node next; // guarded by the queue
        boolean queued; // guarded by the queue

        Node(TimerQueue queue, Runnable task, long due) {
            this.queue = queue;
            this.task = task;
            this.due = due;
        }

        @Override
        public boolean cancel() {
            return queue.cancel(this);
        }
    }
}

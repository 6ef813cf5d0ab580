package io.github.hedge.core.internal;

import io.github.hedge.core.spi.HedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.spi.Ticker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One executor's pending timers (hedge timers, or call deadlines), in due order, on top of its
 * {@link HedgeScheduler}: the scheduler holds at most one task for the whole queue (armed for the
 * earliest due time) instead of one per call.
 *
 * <p>The queue is a binary min-heap indexed by node, so scheduling and cancelling a timer cost
 * {@code O(log n)} under the queue's monitor for any mix of delays (per-call deadlines differ per
 * call); with a constant delay a new timer is the latest and settles at the bottom after one
 * comparison. A cancelled timer is removed at once, so the queue never holds more timers than calls
 * waiting for one. Timers due at the same instant fire in the order they were scheduled.
 *
 * <p>When the queue empties the armed scheduler task is left to expire on its own (it finds nothing
 * due and arms nothing), so a stream of calls whose primaries answer before their delay costs the
 * scheduler about one task per delay period rather than a schedule and a cancel per call. The armed
 * task is trusted until the scheduler reports it {@linkplain ScheduledTask#isDropped()
 * dropped} (a task that is running still counts: it re-arms for what remains): once a closed scheduler has discarded it, the next timer re-arms, and the scheduler's
 * refusal reaches the caller of {@link #schedule}. A built-in scheduler that closes tells the
 * queue at once ({@link Discardable}), and every queued timer's discard callback runs, so the calls
 * waiting on them are settled.
 *
 * <p>Internal; thread-safe.
 */
public final class TimerQueue {
    private static final int INITIAL_CAPACITY = 16;

    private final HedgeScheduler scheduler;
    private final Ticker ticker;
    private final Fire fire = new Fire();

    // guarded by this
    private Node[] heap = new Node[INITIAL_CAPACITY];
    private int size;
    private long sequence;
    private ScheduledTask armed;
    private long armedDue;

    public TimerQueue(HedgeScheduler scheduler, Ticker ticker) {
        this.scheduler = scheduler;
        this.ticker = ticker;
    }

    /**
     * Queues {@code task} to run once after {@code delayNanos}.
     *
     * @return a handle whose {@code cancel()} removes it
     * @throws RuntimeException what the scheduler throws when it refuses to arm (it was closed);
     *     the timer is then not queued
     */
    public ScheduledTask schedule(Runnable task, long delayNanos) {
        return schedule(task, null, delayNanos);
    }

    /**
     * Queues {@code task} to run once after {@code delayNanos}; if a built-in scheduler is closed
     * before it runs, {@code onDiscard} is told instead (on the closing thread).
     *
     * @return a handle whose {@code cancel()} removes it
     * @throws RuntimeException what the scheduler throws when it refuses to arm (it was closed);
     *     the timer is then not queued
     */
    ScheduledTask schedule(Runnable task, Discardable onDiscard, long delayNanos) {
        return schedule(task, onDiscard, ticker.nanoTime(), delayNanos);
    }

    /**
     * Queues {@code task} to run once at {@code nowNanos + delayNanos}, for a caller that has just
     * read this queue's ticker: it saves a clock read, and a delay counted from that reading is due
     * exactly when the caller meant; otherwise as {@link #schedule(Runnable, Discardable, long)}.
     *
     * @param nowNanos a reading of this queue's {@link Ticker}, taken by the caller
     */
    ScheduledTask schedule(Runnable task, Discardable onDiscard, long nowNanos, long delayNanos) {
        long now = nowNanos;
        Node n = new Node(this, task, onDiscard, now + Math.max(0, delayNanos));
        synchronized (this) {
            n.seq = sequence++;
            insertLocked(n);
            if (armed == null || n.due - armedDue < 0 || armed.isDropped()) {
                // the earliest timer moved up, or the armed task will never run: arm for the earliest
                ScheduledTask previous = armed;
                long due = heap[0].due;
                try {
                    armed = scheduler.schedule(fire, due - now);
                } catch (RuntimeException e) {
                    removeLocked(n);
                    armed = previous;
                    throw e;
                }
                armedDue = due;
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
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        n.index = size;
        heap[size++] = n;
        siftUp(n.index);
    }

    private void removeLocked(Node n) {
        int i = n.index;
        n.index = -1;
        size--;
        Node last = heap[size];
        heap[size] = null;
        if (i != size) {
            heap[i] = last;
            last.index = i;
            siftDown(i);
            if (heap[i] == last) {
                siftUp(i);
            }
        }
        if (heap.length > INITIAL_CAPACITY && size < heap.length / 4) {
            heap = Arrays.copyOf(heap, heap.length / 2); // a burst of timers does not pin memory
        }
    }

    private static boolean before(Node a, Node b) {
        long d = a.due - b.due;
        return d < 0 || (d == 0 && a.seq < b.seq);
    }

    private void siftUp(int i) {
        Node n = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Node p = heap[parent];
            if (!before(n, p)) {
                break;
            }
            heap[i] = p;
            p.index = i;
            i = parent;
        }
        heap[i] = n;
        n.index = i;
    }

    private void siftDown(int i) {
        Node n = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && before(heap[right], heap[child])) {
                child = right;
            }
            Node c = heap[child];
            if (!before(c, n)) {
                break;
            }
            heap[i] = c;
            c.index = i;
            i = child;
        }
        heap[i] = n;
        n.index = i;
    }

    private synchronized boolean cancel(Node n) {
        if (n.index < 0) {
            return false;
        }
        removeLocked(n);
        n.task = null;
        n.dropped = true;
        return true;
    }

    /**
     * The armed scheduler task was dropped by a closing scheduler: no timer of this queue can fire
     * any more, so each is handed to its discard callback, and the next {@link #schedule} re-arms
     * (and learns that the scheduler refuses).
     */
    private void discardAll() {
        Node[] dropped;
        int count;
        synchronized (this) {
            armed = null;
            dropped = heap;
            count = size;
            heap = new Node[INITIAL_CAPACITY];
            size = 0;
            for (int i = 0; i < count; i++) {
                dropped[i].index = -1;
                dropped[i].task = null;
                dropped[i].dropped = true;
            }
        }
        for (int i = 0; i < count; i++) {
            Discardable d = dropped[i].onDiscard;
            if (d != null) {
                SchedulerThreads.runGuarded(d::discarded);
            }
        }
    }

    /** The task armed on the scheduler. */
    private final class Fire implements Runnable, Discardable {
        @Override
        public void run() {
            fire();
        }

        @Override
        public void discarded() {
            discardAll();
        }
    }

    /** The armed scheduler task: runs every timer due, then arms for the next one, if any. */
    private void fire() {
        List<Runnable> due = null;
        synchronized (this) {
            armed = null;
            long now = ticker.nanoTime();
            while (size > 0 && heap[0].due - now <= 0) {
                Node n = heap[0];
                removeLocked(n);
                if (due == null) {
                    due = new ArrayList<>(4);
                }
                due.add(n.task);
                n.task = null;
            }
            if (size > 0) {
                try {
                    armed = scheduler.schedule(fire, heap[0].due - now);
                    armedDue = heap[0].due;
                } catch (RuntimeException e) {
                    // the scheduler was closed: nothing can fire any more; the next schedule() re-arms
                    // and reports the refusal to its caller
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
        final Discardable onDiscard;
        long seq; // guarded by the queue
        Runnable task; // guarded by the queue
        int index = -1; // guarded by the queue; -1 once fired, cancelled or discarded
        boolean dropped; // guarded by the queue; cancelled or discarded before it fired

        Node(TimerQueue queue, Runnable task, Discardable onDiscard, long due) {
            this.queue = queue;
            this.task = task;
            this.onDiscard = onDiscard;
            this.due = due;
        }

        @Override
        public boolean cancel() {
            return queue.cancel(this);
        }

        @Override
        public boolean isDropped() {
            synchronized (queue) {
                return dropped;
            }
        }
    }
}

package io.github.hedge.core.internal;

import io.github.hedge.core.spi.ClosableHedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link io.github.hedge.core.spi.HedgeScheduler} on a hashed timing wheel driven by one daemon
 * thread ({@code hedge-scheduler-N}, started by the constructor).
 *
 * <p>Time is cut into ticks of {@code tick} nanoseconds; the wheel has a power-of-two number of
 * slots, each a doubly linked list of timeouts, and a timeout whose delay spans more than one turn
 * of the wheel waits there for its remaining rounds. A task runs on the first tick boundary at or
 * after its due time, so it fires up to one tick (plus the OS's timer slack) late, never early.
 *
 * <p>{@link #schedule} and {@link ScheduledTask#cancel()} are O(1) and lock-free: a new timeout goes
 * through a multi-producer queue that only the wheel thread drains, and cancel is one CAS on the
 * timeout's state, after which the task is unreferenced at once and the timeout is unlinked from its
 * slot by the wheel thread on its next pass (so cancelled timers never accumulate).
 * {@link #pendingTasks()} is exact. While tasks are pending the wheel thread wakes once per tick;
 * once none has been pending for 50 ms it parks until one is scheduled, so an idle scheduler costs
 * no CPU (and a busy one does not pay a wake-up per schedule).
 *
 * <p>Thread-safe. A task that throws is logged and never stops the thread.
 */
public final class HashedWheelScheduler implements ClosableHedgeScheduler {
    /** The default tick: 1 ms. */
    public static final Duration DEFAULT_TICK = Duration.ofMillis(1);
    /** The default number of slots: 512 (one turn = 512 ticks). */
    public static final int DEFAULT_WHEEL_SIZE = 512;

    private static final long MIN_TICK_NANOS = 10_000;
    private static final long MAX_TICK_NANOS = 1_000_000_000;
    /** At most this many new timeouts are moved onto the wheel per tick, so a flood cannot stall ticking. */
    private static final int MAX_TRANSFERS_PER_TICK = 100_000;
    /** How long the thread keeps ticking with nothing pending before it parks for good: 50 ms. */
    private static final long LINGER_NANOS = 50_000_000;

    private final long tickNanos;
    private final long lingerTicks;
    private final Slot[] wheel;
    private final int mask;
    private final long startNanos;
    private final Queue<Timeout> added = new ConcurrentLinkedQueue<>();
    private final Queue<Timeout> cancelled = new ConcurrentLinkedQueue<>();
    private final AtomicLong pending = new AtomicLong();
    private final Thread worker;
    private volatile boolean closed;
    /** True while the worker is parked without deadline, waiting for a first pending task. */
    private volatile boolean sleeping;

    /** The next tick to process; worker thread only. */
    private long tick;

    /** A scheduler with a 1 ms tick and 512 slots. */
    public HashedWheelScheduler() {
        this(DEFAULT_TICK, DEFAULT_WHEEL_SIZE);
    }

    /**
     * @param tick the wheel's resolution, in [10 µs, 1 s]: tasks fire up to one tick late
     * @param wheelSize the number of slots, in [1, 2^20], rounded up to a power of two
     */
    public HashedWheelScheduler(Duration tick, int wheelSize) {
        long nanos = Checks.positiveNanos("tick", tick);
        if (nanos < MIN_TICK_NANOS || nanos > MAX_TICK_NANOS) {
            throw new IllegalArgumentException("tick must be in [" + Duration.ofNanos(MIN_TICK_NANOS) + ", "
                    + Duration.ofNanos(MAX_TICK_NANOS) + "], was " + tick);
        }
        Checks.closedRange("wheelSize", wheelSize, 1, 1 << 20);
        int size = Integer.highestOneBit(wheelSize);
        if (size < wheelSize) {
            size <<= 1;
        }
        this.tickNanos = nanos;
        this.lingerTicks = Math.max(1, LINGER_NANOS / nanos);
        this.wheel = new Slot[size];
        for (int i = 0; i < size; i++) {
            wheel[i] = new Slot();
        }
        this.mask = size - 1;
        this.startNanos = System.nanoTime();
        this.worker = SchedulerThreads.newDaemon(this::work);
        worker.start();
    }

    /** @throws RejectedExecutionException after {@link #close()} */
    @Override
    public ScheduledTask schedule(Runnable task, long delayNanos) {
        Checks.notNull("task", task);
        if (closed) {
            throw new RejectedExecutionException("scheduler is closed");
        }
        long now = System.nanoTime() - startNanos;
        Timeout t = new Timeout(this, task, saturatedAdd(now, Math.max(0, delayNanos)));
        pending.incrementAndGet();
        added.add(t);
        if (sleeping) {
            LockSupport.unpark(worker);
        }
        if (closed) { // raced with close(): make sure the task is not left behind, and say so
            t.cancel();
            throw new RejectedExecutionException("scheduler is closed");
        }
        return t;
    }

    @Override
    public long pendingTasks() {
        return pending.get();
    }

    /** @return the tick, in nanoseconds */
    public long tickNanos() {
        return tickNanos;
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(worker);
        if (Thread.currentThread() == worker) {
            return; // the loop ends after the running task
        }
        boolean interrupted = false;
        while (worker.isAlive()) {
            try {
                worker.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "HashedWheelScheduler[tick=" + Duration.ofNanos(tickNanos) + ", slots=" + wheel.length + ", pending="
                + pending.get() + "]";
    }

    // ---- worker thread ----

    private void work() {
        int idleTicks = 0;
        while (!closed) {
            Thread.interrupted(); // a stray interrupt must not turn the parks below into a busy loop
            unlinkCancelled();
            long wait = tick * tickNanos - (System.nanoTime() - startNanos);
            if (wait > 0) {
                if (idleTicks >= lingerTicks && pending.get() == 0) {
                    sleepUntilScheduled();
                    idleTicks = 0;
                } else {
                    LockSupport.parkNanos(this, wait);
                }
                continue;
            }
            transferAdded();
            expire(wheel[(int) (tick & mask)]);
            tick++;
            idleTicks = pending.get() == 0 ? idleTicks + 1 : 0;
        }
        discardAll();
    }

    /** Called with no task pending: parks without deadline until {@link #schedule} unparks. */
    private void sleepUntilScheduled() {
        // No pending task means no live timeout on the wheel (new ones are still in the queue),
        // so the ticks slept through can be skipped instead of walked one by one.
        catchUp();
        transferAdded(); // drops the timeouts cancelled before they reached the wheel
        sleeping = true;
        // schedule() increments pending, then reads sleeping: one of us sees the other
        if (pending.get() == 0 && !closed) {
            LockSupport.park(this);
            sleeping = false;
            catchUp(); // nothing was moved onto the wheel since pending was seen at 0
        }
        sleeping = false;
    }

    private void catchUp() {
        long current = (System.nanoTime() - startNanos) / tickNanos;
        if (current > tick) {
            tick = current;
        }
    }

    private void unlinkCancelled() {
        for (Timeout t; (t = cancelled.poll()) != null; ) {
            if (t.slot != null) {
                t.slot.remove(t);
            }
        }
    }

    private void transferAdded() {
        for (int i = 0; i < MAX_TRANSFERS_PER_TICK; i++) {
            Timeout t = added.poll();
            if (t == null) {
                return;
            }
            if (t.state != Timeout.WAITING) {
                continue; // cancelled before it reached the wheel
            }
            long dueTick = t.deadline / tickNanos + (t.deadline % tickNanos == 0 ? 0 : 1);
            if (dueTick < tick) {
                dueTick = tick; // late already (a slow tick or a flood): run on this tick
            }
            t.rounds = (dueTick - tick) / wheel.length;
            wheel[(int) (dueTick & mask)].add(t);
        }
    }

    private void expire(Slot slot) {
        Timeout t = slot.head;
        while (t != null) {
            Timeout next = t.next;
            if (t.state != Timeout.WAITING) {
                slot.remove(t);
            } else if (t.rounds <= 0) {
                slot.remove(t);
                if (Timeout.STATE.compareAndSet(t, Timeout.WAITING, Timeout.EXPIRED)) {
                    pending.decrementAndGet();
                    Runnable task = t.task;
                    t.task = null;
                    SchedulerThreads.runGuarded(task);
                }
            } else {
                t.rounds--;
            }
            t = next;
        }
    }

    private void discardAll() {
        for (Slot slot : wheel) {
            for (Timeout t = slot.head; t != null; ) {
                Timeout next = t.next;
                discard(t);
                slot.remove(t);
                t = next;
            }
        }
        for (Timeout t; (t = added.poll()) != null; ) {
            discard(t);
        }
        cancelled.clear();
    }

    /** Drops a pending timeout and tells its task, if it wants to know ({@link Discardable}). */
    private static void discard(Timeout t) {
        Runnable task = t.task;
        if (t.cancel() && task instanceof Discardable d) {
            SchedulerThreads.runGuarded(d::discarded);
        }
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }

    /** One slot of the wheel: a doubly linked list touched by the worker thread only. */
    private static final class Slot {
        Timeout head;
        Timeout tail;

        void add(Timeout t) {
            t.slot = this;
            t.prev = tail;
            if (tail == null) {
                head = t;
            } else {
                tail.next = t;
            }
            tail = t;
        }

        void remove(Timeout t) {
            if (t.slot != this) {
                return; // already unlinked
            }
            if (t.prev == null) {
                head = t.next;
            } else {
                t.prev.next = t.next;
            }
            if (t.next == null) {
                tail = t.prev;
            } else {
                t.next.prev = t.prev;
            }
            t.prev = null;
            t.next = null;
            t.slot = null;
        }
    }

    /** A scheduled task and its handle. */
    private static final class Timeout implements ScheduledTask {
        static final int WAITING = 0;
        static final int CANCELLED = 1;
        static final int EXPIRED = 2;
        static final AtomicIntegerFieldUpdater<Timeout> STATE =
                AtomicIntegerFieldUpdater.newUpdater(Timeout.class, "state");

        final HashedWheelScheduler owner;
        /** Due time, in nanoseconds since the scheduler started. */
        final long deadline;
        /** Nulled when the timeout runs or is cancelled, so the scheduler never retains a dead task. */
        Runnable task;

        volatile int state;

        // worker thread only
        long rounds;
        Slot slot;
        Timeout prev;
        Timeout next;

        Timeout(HashedWheelScheduler owner, Runnable task, long deadline) {
            this.owner = owner;
            this.task = task;
            this.deadline = deadline;
        }

        @Override
        public boolean isDropped() {
            int s = state;
            return s == CANCELLED || (s == WAITING && owner.closed);
        }

        @Override
        public boolean cancel() {
            if (!STATE.compareAndSet(this, WAITING, CANCELLED)) {
                return false;
            }
            task = null;
            owner.pending.decrementAndGet();
            owner.cancelled.add(this);
            return true;
        }
    }
}

package io.github.hedge.core.internal;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The calls of one executor whose hedge found no budget token at its delay and waits for one,
 * oldest first. A token goes to the call that has waited longest: when a primary deposits tokens,
 * when a hedge comes due while others wait, and when a waiting call's own re-check timer fires,
 * the queue is drained from its head until the budget has no whole token left.
 *
 * <p>Why a queue: a token used to go to whichever call asked first after it came back. On a steady
 * load at a p95 delay the fresh hedges of new calls spend about every token, so a call stuck on a
 * stalled replica, which could only ask now and then, found the bucket empty each time and waited
 * out the whole stall (a CI run of hedge-cassandra-it's {@code StallIT}: 2,048 ms).
 *
 * <p>Thread-safe. The queue is a {@link LinkedHashMap} under its own monitor, so a call that ends
 * while it waits leaves in O(1); that monitor is never held while a call's monitor or user code
 * runs. Draining is serialized without blocking (a work-in-progress counter): a thread that finds
 * another draining leaves the work to it, and that thread drains again before it stops. A drain
 * runs the granted hedge's attempt function on the draining thread (a timer thread, or the caller
 * of a new call whose primary brought the token). With context propagators set, every drain runs
 * on a timer thread instead ({@link #drainSoon()}): a waiting call's context is applied around its
 * hedge and then cleared, which must not happen on a caller's thread or inside another call's
 * context.
 */
final class DeferredHedges {
    /** One waiting call; its {@link #run()} is wrapped in the call's context propagators. */
    interface Waiter extends Runnable {
        /** @return true if the waiter is done with (granted, or no longer waiting); false if it found no token */
        boolean settled();
    }

    private final Map<HedgedCall<?>, Waiter> queue = new LinkedHashMap<>();
    private final AtomicInteger drainRequests = new AtomicInteger();
    /** Set while a drain is queued on the timers (with context propagators), so requests coalesce. */
    private final AtomicBoolean drainQueued = new AtomicBoolean();

    private final Engine engine;
    /** The queue's size, for the lock-free check on every call's start. */
    private volatile int size;

    DeferredHedges(Engine engine) {
        this.engine = engine;
    }

    /** @return whether any call waits; a volatile read, for the hot path */
    boolean isEmpty() {
        return size == 0;
    }

    /** Puts {@code call} at the back of the queue unless it is in it already (it keeps its place). */
    void add(HedgedCall<?> call, Waiter waiter) {
        synchronized (queue) {
            if (queue.putIfAbsent(call, waiter) == null) {
                size = queue.size();
            }
        }
    }

    /** @return whether {@code call} is in the queue */
    boolean contains(HedgedCall<?> call) {
        synchronized (queue) {
            return queue.containsKey(call);
        }
    }

    /** Takes {@code call} out of the queue, if it is in it. */
    void remove(HedgedCall<?> call) {
        synchronized (queue) {
            if (queue.remove(call) != null) {
                size = queue.size();
            }
        }
    }

    /**
     * Drains now, on this thread; or, when the executor propagates context, on a timer thread as
     * soon as possible, since a drain applies and clears each waiting call's context (this thread's
     * own context would be lost). A scheduler that refuses the task leaves the waiting calls to
     * their own timers, which that scheduler refuses too, and which settle them.
     */
    void drainSoon() {
        if (engine.propagators.isEmpty()) {
            drain();
            return;
        }
        if (drainQueued.compareAndSet(false, true)) {
            try {
                engine.timers.schedule(this::drainQueued, 0);
            } catch (RuntimeException e) {
                drainQueued.set(false);
            }
        }
    }

    private void drainQueued() {
        drainQueued.set(false);
        drain();
    }

    /**
     * Gives the budget's whole tokens to the waiting calls, oldest first, until it has none left
     * or nobody waits. Returns at once if another thread is draining (it drains again for this
     * request before it stops).
     */
    void drain() {
        if (drainRequests.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            drainOnce();
            missed = drainRequests.addAndGet(-missed);
        } while (missed != 0);
    }

    private void drainOnce() {
        // a budget with a floor gains tokens with time, which availableTokens() does not count
        boolean precheck = engine.budget.minPerSecond() == 0;
        while (size > 0) {
            if (precheck && engine.budget.availableTokens() < 1) {
                return;
            }
            HedgedCall<?> head;
            Waiter w;
            synchronized (queue) {
                Iterator<Map.Entry<HedgedCall<?>, Waiter>> it = queue.entrySet().iterator();
                if (!it.hasNext()) {
                    return;
                }
                Map.Entry<HedgedCall<?>, Waiter> e = it.next();
                head = e.getKey();
                w = e.getValue();
            }
            try {
                w.run();
            } catch (Throwable t) { // NOPMD: a context propagator is user code
                engine.logHookFailure("a context propagator", t);
                remove(head); // its own re-check timer queues it again, at the back
                continue;
            }
            if (!w.settled()) {
                return; // no token for the oldest: none for anyone behind it
            }
            synchronized (queue) {
                if (queue.remove(head, w)) { // unless it left and came back meanwhile
                    size = queue.size();
                }
            }
        }
    }
}

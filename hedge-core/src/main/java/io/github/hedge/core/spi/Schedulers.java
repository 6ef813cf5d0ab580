package io.github.hedge.core.spi;

import io.github.hedge.core.internal.HashedWheelScheduler;
import io.github.hedge.core.internal.ThreadPoolScheduler;
import java.time.Duration;

/**
 * Factories of the built-in {@link HedgeScheduler}s. Thread-safe.
 *
 * <ul>
 *   <li>{@link #shared()}: the process-wide default, created on first use, on one daemon thread;
 *       never closed.
 *   <li>{@link #threadPool()}: a new scheduler on a {@link java.util.concurrent.ScheduledThreadPoolExecutor}
 *       with one daemon thread. Fires within the OS's timer slack of the due time (tens of
 *       microseconds); schedule and cancel take a lock and cost O(log n).
 *   <li>{@link #hashedWheel(Duration)}: a new scheduler on a hashed timing wheel with one daemon
 *       thread. Lock-free O(1) schedule and cancel; fires up to one tick late.
 * </ul>
 *
 * The default is the thread pool, picked on numbers (a 2-CPU machine, JDK 17, shared with other
 * work): 5 ms timers fired p50 about 80 µs and p99 about 0.2 ms late on the thread pool, against
 * p50 about 0.6 ms and p99 about 1.1 ms on a 1 ms wheel, which adds up to a tick to every hedge
 * delay. Schedule plus cancel cost about 0.2 to 0.35 µs on the thread pool and 0.1 to 0.3 µs on the
 * wheel (1 and 2 threads), a difference negligible next to a remote call. A wheel pays off with
 * very many timers scheduled from many threads.
 */
public final class Schedulers {
    private Schedulers() {}

    /**
     * The process-wide default scheduler, shared by every executor that does not set its own: a
     * {@link #threadPool()} created on first use, whose daemon thread never keeps the JVM alive.
     * It cannot be closed (the instance returned does not implement {@link AutoCloseable}, so
     * containers that close beans do not stop it for everyone).
     *
     * @return the shared scheduler, the same instance on every call
     */
    public static HedgeScheduler shared() {
        return Shared.INSTANCE;
    }

    /**
     * A new scheduler on a {@link java.util.concurrent.ScheduledThreadPoolExecutor} with one daemon
     * thread ({@code hedge-scheduler-N}, started with the first task) that removes cancelled tasks
     * at once. The caller owns it and should {@link ClosableHedgeScheduler#close() close} it.
     *
     * @return a new scheduler
     */
    public static ClosableHedgeScheduler threadPool() {
        return new ThreadPoolScheduler();
    }

    /**
     * A new scheduler on a hashed timing wheel of 512 slots with one daemon thread
     * ({@code hedge-scheduler-N}, started now, parked while nothing is pending). Tasks fire up to
     * one {@code tick} late. The caller owns it and should {@link ClosableHedgeScheduler#close()
     * close} it.
     *
     * @param tick the wheel's resolution, in [10 µs, 1 s]; 1 ms is a common choice
     * @return a new scheduler
     */
    public static ClosableHedgeScheduler hashedWheel(Duration tick) {
        return new HashedWheelScheduler(tick, HashedWheelScheduler.DEFAULT_WHEEL_SIZE);
    }

    /** Lazy holder: the shared scheduler is created on the first call to {@link #shared()}. */
    private static final class Shared {
        static final HedgeScheduler INSTANCE = new Unclosable(new ThreadPoolScheduler());
    }

    /** Hides {@code close()} of the shared scheduler. */
    private static final class Unclosable implements HedgeScheduler {
        private final HedgeScheduler delegate;

        Unclosable(HedgeScheduler delegate) {
            this.delegate = delegate;
        }

        @Override
        public ScheduledTask schedule(Runnable task, long delayNanos) {
            return delegate.schedule(task, delayNanos);
        }

        @Override
        public long pendingTasks() {
            return delegate.pendingTasks();
        }

        @Override
        public String toString() {
            return "Schedulers.shared(" + delegate + ")";
        }
    }
}

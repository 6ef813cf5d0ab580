package io.github.hedge.benchmarks.reactor;

import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * A Reactor {@link Scheduler} on hedge's {@link VirtualTimeScheduler}, so that {@code Mono.delay}
 * (the hand-written hedge's timer) and hedge's own timers share one virtual clock. Tasks run on the
 * thread that advances the clock. Thread-safe as the virtual scheduler is.
 */
final class VirtualReactorScheduler implements Scheduler {
    private final VirtualTimeScheduler time;

    VirtualReactorScheduler(VirtualTimeScheduler time) {
        this.time = time;
    }

    @Override
    public Disposable schedule(Runnable task) {
        return schedule(task, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        ScheduledTask t = time.schedule(task, unit.toNanos(delay));
        return t::cancel;
    }

    @Override
    public long now(TimeUnit unit) {
        return unit.convert(time.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public Worker createWorker() {
        return new Worker() {
            private volatile boolean disposed;

            @Override
            public Disposable schedule(Runnable task) {
                return VirtualReactorScheduler.this.schedule(task);
            }

            @Override
            public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                return VirtualReactorScheduler.this.schedule(task, delay, unit);
            }

            @Override
            public void dispose() {
                disposed = true;
            }

            @Override
            public boolean isDisposed() {
                return disposed;
            }
        };
    }

    @Override
    public void init() {}
}

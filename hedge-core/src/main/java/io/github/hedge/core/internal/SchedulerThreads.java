package io.github.hedge.core.internal;

import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Thread naming and task guarding shared by the built-in schedulers.
 *
 * <p>Internal: not part of the public API. Thread-safe.
 */
final class SchedulerThreads {
    private static final Logger LOG = LoggerFactory.getLogger("io.github.hedge.core.scheduler");
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private SchedulerThreads() {}

    /** @return a new, unstarted daemon thread named {@code hedge-scheduler-N} */
    static Thread newDaemon(Runnable body) {
        Thread t = new Thread(body, "hedge-scheduler-" + SEQUENCE.incrementAndGet());
        t.setDaemon(true);
        return t;
    }

    /** Runs {@code task}; anything it throws is logged and swallowed so the scheduler thread survives. */
    static void runGuarded(Runnable task) {
        try {
            task.run();
        } catch (Throwable e) { // NOPMD: a task must never stop the scheduler thread
            try {
                LOG.warn(
                        "A task scheduled on {} threw; the scheduler carries on",
                        Thread.currentThread().getName(),
                        e);
            } catch (Throwable ignored) { // NOPMD: not even a failing logger
                // nothing else to do
            }
        }
    }
}

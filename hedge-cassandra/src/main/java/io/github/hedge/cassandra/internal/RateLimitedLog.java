package io.github.hedge.cassandra.internal;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Logs one INFO line per interval at most, saying how many events happened since the last line.
 * Thread-safe, lock-free.
 */
public final class RateLimitedLog {
    private final Logger log;
    private final long intervalNanos;
    private final LongSupplier nanoClock;
    private final AtomicLong nextAllowed = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong suppressed = new AtomicLong();

    /**
     * @param log where to log
     * @param intervalNanos at most one line per this interval
     */
    public RateLimitedLog(Logger log, long intervalNanos) {
        this(log, intervalNanos, System::nanoTime);
    }

    /**
     * @param log where to log
     * @param intervalNanos at most one line per this interval
     * @param nanoClock the time in nanoseconds, as {@link System#nanoTime()}
     */
    public RateLimitedLog(Logger log, long intervalNanos, LongSupplier nanoClock) {
        this.log = log;
        this.intervalNanos = intervalNanos;
        this.nanoClock = nanoClock;
    }

    /**
     * Counts one event and logs it if the interval allows.
     *
     * @param message the line; "{}" receives the number of similar events not logged before it
     */
    public void log(String message) {
        long now = nanoClock.getAsLong();
        long next = nextAllowed.get();
        if ((next != Long.MIN_VALUE && now - next < 0) || !nextAllowed.compareAndSet(next, now + intervalNanos)) {
            suppressed.incrementAndGet();
            return;
        }
        if (log.isInfoEnabled()) {
            log.info(message, suppressed.getAndSet(0));
        }
    }
}

package io.github.hedge.grpc.internal;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * One method's requests that were too large to hedge, for one interceptor: the count behind
 * {@code HedgingClientInterceptor.requestsTooLarge()} and whether its log line was written.
 * Thread-safe.
 */
public final class TooLargeCount {
    private final LongAdder count = new LongAdder();
    private final AtomicBoolean logged = new AtomicBoolean();

    /**
     * Counts one request.
     *
     * @return whether this was the method's first counted request on this interceptor, the one to log
     */
    public boolean record() {
        count.increment();
        return !logged.get() && logged.compareAndSet(false, true);
    }

    /** @return the requests counted so far */
    public long sum() {
        return count.sum();
    }
}

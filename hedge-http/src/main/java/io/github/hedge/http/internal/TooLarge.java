package io.github.hedge.http.internal;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Requests not hedged because their body was over the limit, for one filter or interceptor. Thread-safe. */
public final class TooLarge {
    private static final Logger log = LoggerFactory.getLogger("io.github.hedge.http");

    private final LongAdder count = new LongAdder();
    private final AtomicBoolean logged = new AtomicBoolean();

    /**
     * Counts one request, and logs the first at INFO (with the executor's name, never the URL).
     *
     * @param executorName the executor's name
     * @param limit the limit, in bytes
     */
    public void record(String executorName, int limit) {
        count.increment();
        if (!logged.get() && logged.compareAndSet(false, true)) {
            log.info(
                    "hedge {}: a request body over {} bytes (max-hedged-request-bytes) ran once, unhedged;"
                            + " later ones are counted, not logged",
                    executorName,
                    limit);
        }
    }

    /** @return the requests counted so far */
    public long sum() {
        return count.sum();
    }
}

package io.github.hedge.core.event;

/**
 * Handle returned by a listener registration; {@link #close()} unsubscribes. Idempotent and
 * thread-safe.
 */
@FunctionalInterface
public interface Subscription extends AutoCloseable {
    /** Stops delivering events to the listener. */
    @Override
    void close();
}

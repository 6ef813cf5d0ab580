package io.github.hedge.core.spi;

/**
 * A monotonic time source in nanoseconds, like {@link System#nanoTime()}: only differences
 * between two readings mean anything. Injected into the executor, the latency tracker and the
 * budget so tests and simulations run in virtual time.
 *
 * <p>Implementations must be thread-safe and never go backwards.
 */
@FunctionalInterface
public interface Ticker {
    /** @return the current reading, in nanoseconds */
    long nanoTime();

    /** @return the system ticker, {@link System#nanoTime()} */
    static Ticker system() {
        return System::nanoTime;
    }
}

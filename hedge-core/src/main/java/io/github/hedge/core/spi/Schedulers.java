package io.github.hedge.core.spi;

/**
 * Factories of the built-in {@link HedgeScheduler}s. (API shell.)
 */
public final class Schedulers {
    private Schedulers() {}

    /** The process-wide default scheduler: one daemon thread, shared by every executor that does not set its own. */
    public static HedgeScheduler shared() {
        throw new UnsupportedOperationException();
    }
}

package io.github.hedge.cassandra.internal;

import io.github.hedge.core.DelayContext;
import io.github.hedge.core.DelayPolicy;

/**
 * The wrapped session's delay while the percentile has no estimate yet: {@link
 * LatencyScores#warmupDelayNanos()} of the session's own latency scores, which move with every
 * answer (the core's tracker publishes its percentiles at its refresh, and only after {@code
 * minSamples}). Thread-safe: reads the scores only.
 */
public final class WarmupDelay implements DelayPolicy {
    /**
     * Tokens a warming-up budget starts with: a new session may hedge 20 calls before its primaries
     * have paid for them (fewer than the budget's default burst, which it may save later); the
     * first primaries' deposits repay them ({@link io.github.hedge.core.HedgeBudget.Builder#initialTokens(double)}).
     */
    public static final double INITIAL_TOKENS = 20;

    private final LatencyScores<?> scores;

    /** @param scores the session's latency scores */
    public WarmupDelay(LatencyScores<?> scores) {
        this.scores = scores;
    }

    @Override
    public long delayNanos(DelayContext context) {
        return scores.warmupDelayNanos();
    }

    @Override
    public String toString() {
        return "warmup(" + LatencyScores.STALL_FACTOR + " x the median node's latency so far, at least "
                + LatencyScores.STALL_FACTOR * LatencyScores.FLOOR_NANOS / 1e6 + " ms)";
    }
}

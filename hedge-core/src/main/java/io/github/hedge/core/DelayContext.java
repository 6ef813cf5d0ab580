package io.github.hedge.core;

import java.util.List;

/**
 * What a {@link DelayPolicy} may look at when it decides the delay before the next attempt of a
 * call. The executor passes one for each decision; adapters that decide outside the executor (the
 * Cassandra driver's speculative execution policy) build one with {@link #of(int, List,
 * LatencyTracker, HedgeBudget)}.
 *
 * <p>Implementations are used by one thread at a time.
 */
public interface DelayContext {
    /** @return the attempt about to be started: 2 for the first hedge, 3 for the second... */
    int attemptNumber();

    /** @return targets the call's earlier attempts ran on, in start order; may be empty, never null */
    List<String> triedTargets();

    /** @return the target of the latest attempt, or {@code null} if it was not reported */
    default String previousTarget() {
        List<String> tried = triedTargets();
        return tried.isEmpty() ? null : tried.get(tried.size() - 1);
    }

    /** @return recent per-attempt latency for adaptive policies */
    LatencyTracker latency();

    /**
     * How full the call's budget is now, as a share of the most tokens it may save (a lock-free
     * estimate, {@link HedgeBudget#fill()}), so that an adaptive policy can aim at less demand while
     * the budget refills ({@link PercentileDelay.Builder#budgetFeedback(boolean)}).
     *
     * @return in [0, 1]; 1 when unknown or unlimited (the default, and what {@link #of} contexts
     *     report)
     */
    default double budgetFill() {
        return 1.0;
    }

    /**
     * The call's budget's ratio ({@link HedgeBudget#ratio()}): the share of calls it pays hedges
     * for, so that an adaptive policy whose budget runs low can aim at what the budget supplies
     * ({@link PercentileDelay.Builder#budgetFeedback(boolean)}).
     *
     * @return in [0, 1], infinite for an unlimited budget, NaN when unknown (the default, and what
     *     {@link #of} contexts report)
     */
    default double budgetRatio() {
        return Double.NaN;
    }

    /**
     * The share of the next {@code calls} calls the call's budget can pay a hedge for ({@link
     * HedgeBudget#supply(long)}), so that an adaptive policy can keep demand for hedges within
     * what the budget supplies ({@link PercentileDelay.Builder#budgetFeedback(boolean)}).
     *
     * @param calls the horizon, in calls
     * @return at least 0, infinite for an unlimited budget, NaN when unknown (the default, and
     *     what {@link #of} contexts report)
     */
    default double budgetSupply(long calls) {
        return Double.NaN;
    }

    /**
     * How many hedges the call's budget pays for over its first {@code calls} calls, by its
     * settings ({@link HedgeBudget#hedgesOver(long)}), so that an adaptive policy sends no warm-up
     * hedges that a budget too small for them would refuse ({@link
     * PercentileDelay.Builder#budgetFeedback(boolean)}).
     *
     * @param calls the primary calls, at least 0
     * @return hedges, at least 0, infinite for an unlimited budget, NaN when unknown (the default,
     *     and what {@link #of} contexts report)
     */
    default double budgetHedgesOver(long calls) {
        return Double.NaN;
    }

    /**
     * A context built from plain values.
     *
     * @param attemptNumber the attempt about to be started, at least 2
     * @param triedTargets targets already tried, in order (copied)
     * @param latency the latency tracker
     * @return an immutable context
     */
    static DelayContext of(int attemptNumber, List<String> triedTargets, LatencyTracker latency) {
        return of(attemptNumber, triedTargets, latency, null);
    }

    /**
     * A context built from plain values that reports {@code budget}'s fill, ratio and supply, as the
     * executor's contexts report their call's budget: for an adapter that decides the delay outside
     * the executor but charges hedges to a {@link HedgeBudget} of its own (the Cassandra driver's
     * speculative execution policy), so that budget feedback works there too.
     *
     * @param attemptNumber the attempt about to be started, at least 2
     * @param triedTargets targets already tried, in order (copied)
     * @param latency the latency tracker
     * @param budget the budget the hedge will be charged to; {@code null} for none (the context then
     *     reports what {@link #of(int, List, LatencyTracker)} contexts report)
     * @return a context, immutable but for the budget's state, which it reads when asked
     */
    static DelayContext of(int attemptNumber, List<String> triedTargets, LatencyTracker latency, HedgeBudget budget) {
        if (attemptNumber < 2) {
            throw new IllegalArgumentException("attemptNumber must be >= 2, was " + attemptNumber);
        }
        List<String> targets = List.copyOf(triedTargets);
        java.util.Objects.requireNonNull(latency, "latency must not be null");
        return new DelayContext() {
            @Override
            public int attemptNumber() {
                return attemptNumber;
            }

            @Override
            public List<String> triedTargets() {
                return targets;
            }

            @Override
            public LatencyTracker latency() {
                return latency;
            }

            @Override
            public double budgetFill() {
                return budget == null ? 1.0 : budget.fill();
            }

            @Override
            public double budgetRatio() {
                return budget == null ? Double.NaN : budget.ratio();
            }

            @Override
            public double budgetSupply(long calls) {
                return budget == null ? Double.NaN : budget.supply(calls);
            }

            @Override
            public double budgetHedgesOver(long calls) {
                return budget == null ? Double.NaN : budget.hedgesOver(calls);
            }
        };
    }
}

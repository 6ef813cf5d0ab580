package io.github.hedge.core;

/**
 * The state of a {@link HedgeBudget} at one instant, for metrics and the actuator endpoint. Immutable.
 *
 * @param ratio the configured ratio of extra attempts to primary calls
 * @param primariesInWindow primary calls counted in the current window
 * @param hedgesInWindow extra attempts granted in the current window
 * @param remaining tokens available now (fractional)
 * @param totalGranted extra attempts granted since creation
 * @param totalDenied extra attempts denied since creation
 */
public record BudgetSnapshot(
        double ratio,
        long primariesInWindow,
        long hedgesInWindow,
        double remaining,
        long totalGranted,
        long totalDenied) {}

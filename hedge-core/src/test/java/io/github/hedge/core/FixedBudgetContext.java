package io.github.hedge.core;

import java.util.List;

/**
 * A delay decision's context for unit tests of delay policies: the first hedge (attempt 2) of a
 * call that tried no target yet, a given tracker, and budget reads fixed to given values (NaN:
 * unknown, as {@link DelayContext}'s defaults). Immutable.
 */
final class FixedBudgetContext implements DelayContext {
    private final LatencyTracker tracker;
    private final double fill;
    private final double ratio;
    private final double supply;
    private final double hedgesOver;

    private FixedBudgetContext(LatencyTracker tracker, double fill, double ratio, double supply, double hedgesOver) {
        this.tracker = tracker;
        this.fill = fill;
        this.ratio = ratio;
        this.supply = supply;
        this.hedgesOver = hedgesOver;
    }

    /** @return a context whose budget's bucket is {@code fill} full, its other reads unknown */
    static FixedBudgetContext withFill(LatencyTracker tracker, double fill) {
        return new FixedBudgetContext(tracker, fill, Double.NaN, Double.NaN, Double.NaN);
    }

    /** @return this context with the budget's ratio set */
    FixedBudgetContext ratio(double ratio) {
        return new FixedBudgetContext(tracker, fill, ratio, supply, hedgesOver);
    }

    /**
     * @param supply what {@link #budgetSupply} returns, whatever the calls
     * @param hedgesOver what {@link #budgetHedgesOver} returns, whatever the calls
     * @return this context with the budget's supply set
     */
    FixedBudgetContext supply(double supply, double hedgesOver) {
        return new FixedBudgetContext(tracker, fill, ratio, supply, hedgesOver);
    }

    @Override
    public int attemptNumber() {
        return 2;
    }

    @Override
    public List<String> triedTargets() {
        return List.of();
    }

    @Override
    public LatencyTracker latency() {
        return tracker;
    }

    @Override
    public double budgetFill() {
        return fill;
    }

    @Override
    public double budgetRatio() {
        return ratio;
    }

    @Override
    public double budgetSupply(long calls) {
        return supply;
    }

    @Override
    public double budgetHedgesOver(long calls) {
        return hedgesOver;
    }
}

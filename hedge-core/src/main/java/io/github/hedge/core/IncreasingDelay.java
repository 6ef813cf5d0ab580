package io.github.hedge.core;

import io.github.hedge.core.internal.Checks;
import java.time.Duration;

/**
 * A delay that grows with the attempt number, linearly or geometrically, up to a cap. Built by
 * {@link DelayPolicy#increasing} and {@link DelayPolicy#exponential}. Immutable and thread-safe.
 */
public final class IncreasingDelay implements DelayPolicy {
    private final Duration initial;
    private final Duration step;
    private final double multiplier;
    private final Duration max;
    private final long initialNanos;
    private final long stepNanos;
    private final long maxNanos;

    private IncreasingDelay(Duration initial, Duration step, double multiplier, Duration max) {
        this.initial = initial;
        this.step = step;
        this.multiplier = multiplier;
        this.max = max;
        this.initialNanos = initial.toNanos();
        this.stepNanos = step.toNanos();
        this.maxNanos = max.toNanos();
    }

    static IncreasingDelay linear(Duration initial, Duration step, Duration max) {
        Checks.nonNegative("initial", initial);
        Checks.nonNegative("step", step);
        Checks.nonNegative("max", max);
        Checks.ordered("initial", initial, "max", max);
        return new IncreasingDelay(initial, step, 1.0, max);
    }

    static IncreasingDelay exponential(Duration initial, double multiplier, Duration max) {
        Checks.positive("initial", initial);
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) { // NaN fails the first test
            throw new IllegalArgumentException("multiplier must be a finite number >= 1, was " + multiplier);
        }
        Checks.positive("max", max);
        Checks.ordered("initial", initial, "max", max);
        return new IncreasingDelay(initial, Duration.ZERO, multiplier, max);
    }

    @Override
    public long delayNanos(DelayContext context) {
        int hedgeIndex = Math.max(0, context.attemptNumber() - 2);
        double d;
        if (multiplier == 1.0) {
            d = (double) initialNanos + (double) stepNanos * hedgeIndex;
        } else {
            d = initialNanos * Math.pow(multiplier, hedgeIndex);
        }
        return d >= maxNanos ? maxNanos : (long) d;
    }

    /** @return the delay before the first hedge */
    public Duration initial() {
        return initial;
    }

    /** @return the linear step ({@link Duration#ZERO} for a geometric policy) */
    public Duration step() {
        return step;
    }

    /** @return the geometric multiplier (1 for a linear policy) */
    public double multiplier() {
        return multiplier;
    }

    /** @return the cap */
    public Duration max() {
        return max;
    }

    @Override
    public String toString() {
        return multiplier == 1.0
                ? "increasing(" + initial + ", +" + step + ", max " + max + ")"
                : "exponential(" + initial + ", x" + multiplier + ", max " + max + ")";
    }
}

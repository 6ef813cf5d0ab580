package io.github.hedge.core.internal;

import java.time.Duration;

/**
 * Validation for the budget's settings that {@link Checks} has no shape for, with the same message
 * shape: setting, valid range, value given.
 *
 * <p>Internal: not part of the public API. Thread-safe (stateless).
 */
public final class BudgetChecks {
    private BudgetChecks() {}

    /** {@code value} must be a finite number {@code >= 0}. */
    public static double finiteNonNegative(String setting, double value) {
        if (!(value >= 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(setting + " must be a finite number >= 0, was " + fmt(value));
        }
        return value;
    }

    /**
     * {@code value} must be {@code > 0} and representable in nanoseconds as a {@code long} (about
     * 292 years).
     *
     * @return the value in nanoseconds
     */
    public static long positiveNanos(String setting, Duration value) {
        Checks.positive(setting, value);
        try {
            return value.toNanos();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(
                    setting + " must be > 0 and <= " + Duration.ofNanos(Long.MAX_VALUE) + ", was " + value, e);
        }
    }

    private static String fmt(double d) {
        return d == Math.rint(d) && !Double.isInfinite(d) ? Long.toString((long) d) : Double.toString(d);
    }
}

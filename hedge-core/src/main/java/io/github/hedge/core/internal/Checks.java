package io.github.hedge.core.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * Validation shared by every builder, so each bad setting fails with one message shape: the
 * setting, its valid range and the value given ({@code "percentile must be in (0, 1), was 1.5"}).
 *
 * <p>Internal: not part of the public API. Thread-safe (stateless).
 */
public final class Checks {
    private Checks() {}

    public static <T> T notNull(String setting, T value) {
        if (value == null) {
            throw new NullPointerException(setting + " must not be null");
        }
        return value;
    }

    /**
     * The longest duration any setting accepts: 365 days. Larger values are configuration mistakes,
     * and keeping durations this small keeps every nanosecond sum far from overflow.
     */
    public static final Duration MAX_DURATION = Duration.ofDays(365);

    /** {@link #MAX_DURATION} in nanoseconds. */
    public static final long MAX_DURATION_NANOS = MAX_DURATION.toNanos();

    /**
     * The reasons an adapter may give {@code AttemptContext.stopFurtherAttempts(reason)}: those that
     * only the adapter can know (the others the executor finds itself).
     *
     * @param reason the adapter's reason
     * @return {@code reason}
     * @throws IllegalArgumentException if it is null or not one of PUSHBACK, REQUEST_TOO_LARGE,
     *     NO_UNTRIED_TARGET, CLIENT_CLOSING
     */
    public static io.github.hedge.core.event.NotHedged.Reason adapterStopReason(
            io.github.hedge.core.event.NotHedged.Reason reason) {
        if (reason != null) {
            switch (reason) {
                case PUSHBACK, REQUEST_TOO_LARGE, NO_UNTRIED_TARGET, CLIENT_CLOSING -> {
                    return reason;
                }
                default -> {
                    // only the executor decides the others
                }
            }
        }
        throw new IllegalArgumentException(
                "reason must be PUSHBACK, REQUEST_TOO_LARGE, NO_UNTRIED_TARGET or CLIENT_CLOSING, was " + reason);
    }

    /**
     * For durations that arrive at runtime rather than in configuration (a server's pushback), where
     * a huge value must not throw: {@code d} in nanoseconds, or {@link #MAX_DURATION} if longer.
     *
     * @param d a non-negative duration
     * @return its nanoseconds, saturated at {@link #MAX_DURATION}
     */
    public static long toNanosSaturated(Duration d) {
        return d.compareTo(MAX_DURATION) >= 0 ? MAX_DURATION_NANOS : d.toNanos();
    }

    /** {@code value} must be strictly positive (and at most {@link #MAX_DURATION}). */
    public static Duration positive(String setting, Duration value) {
        notNull(setting, value);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(setting + " must be > 0, was " + value);
        }
        return atMostMax(setting, value);
    }

    /** {@code value} must be zero or positive (and at most {@link #MAX_DURATION}). */
    public static Duration nonNegative(String setting, Duration value) {
        notNull(setting, value);
        if (value.isNegative()) {
            throw new IllegalArgumentException(setting + " must be >= 0, was " + value);
        }
        return atMostMax(setting, value);
    }

    private static Duration atMostMax(String setting, Duration value) {
        if (value.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(setting + " must be <= " + MAX_DURATION + ", was " + value);
        }
        return value;
    }

    /** {@code value} in the open interval {@code (lo, hi)}. */
    public static double openRange(String setting, double value, double lo, double hi) {
        if (!(value > lo && value < hi)) {
            throw new IllegalArgumentException(
                    setting + " must be in (" + fmt(lo) + ", " + fmt(hi) + "), was " + fmt(value));
        }
        return value;
    }

    /** {@code value} in the closed interval {@code [lo, hi]}. */
    public static double closedRange(String setting, double value, double lo, double hi) {
        if (!(value >= lo && value <= hi)) {
            throw new IllegalArgumentException(
                    setting + " must be in [" + fmt(lo) + ", " + fmt(hi) + "], was " + fmt(value));
        }
        return value;
    }

    /** {@code value} in the closed interval {@code [lo, hi]}. */
    public static long closedRange(String setting, long value, long lo, long hi) {
        if (value < lo || value > hi) {
            throw new IllegalArgumentException(setting + " must be in [" + lo + ", " + hi + "], was " + value);
        }
        return value;
    }

    /** {@code value >= lo}. */
    public static long atLeast(String setting, long value, long lo) {
        if (value < lo) {
            throw new IllegalArgumentException(setting + " must be >= " + lo + ", was " + value);
        }
        return value;
    }

    /** {@code value > lo}, for doubles. */
    public static double greaterThan(String setting, double value, double lo) {
        if (!(value > lo) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(
                    setting + " must be a finite number > " + fmt(lo) + ", was " + fmt(value));
        }
        return value;
    }

    /** {@code value} finite and {@code >= 0}. */
    public static double finiteNonNegative(String setting, double value) {
        if (!(value >= 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(setting + " must be a finite number >= 0, was " + fmt(value));
        }
        return value;
    }

    /** {@code value > 0} (and at most {@link #MAX_DURATION}); returns it in nanoseconds. */
    public static long positiveNanos(String setting, Duration value) {
        return positive(setting, value).toNanos();
    }

    /** Two bounds: {@code min <= max}. */
    public static void ordered(String minSetting, Duration min, String maxSetting, Duration max) {
        if (min != null && max != null && min.compareTo(max) > 0) {
            throw new IllegalArgumentException(minSetting + " must be <= " + maxSetting + " (" + max + "), was " + min);
        }
    }

    public static String name(String setting, String value) {
        Objects.requireNonNull(value, setting + " must not be null");
        if (value.isBlank()) {
            throw new IllegalArgumentException(setting + " must not be blank, was \"" + value + "\"");
        }
        return value;
    }

    private static String fmt(double d) {
        return d == Math.rint(d) && !Double.isInfinite(d) ? Long.toString((long) d) : Double.toString(d);
    }
}

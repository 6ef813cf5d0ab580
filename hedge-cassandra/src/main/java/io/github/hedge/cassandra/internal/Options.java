package io.github.hedge.cassandra.internal;

import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import com.datastax.oss.driver.api.core.config.DriverOption;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Reads optional driver options with defaults in code. Every bad value fails with one message
 * shape, the option's path, its valid range and the value given: {@code
 * "advanced.speculative-execution-policy.hedge.percentile must be in (0, 1), was 1.5 (profile
 * default)"}, a value of the wrong type included. Stateless, thread-safe.
 */
public final class Options {
    /** The longest duration any option accepts, as hedge-core's settings. */
    public static final Duration MAX_DURATION = Duration.ofDays(365);

    private Options() {}

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @param min smallest valid (excluded when {@code minOpen})
     * @param minOpen whether {@code min} itself is invalid
     * @param max largest valid (excluded when {@code maxOpen})
     * @param maxOpen whether {@code max} itself is invalid
     * @return the value
     */
    public static double getDouble(
            DriverExecutionProfile p,
            DriverOption o,
            double def,
            double min,
            boolean minOpen,
            double max,
            boolean maxOpen) {
        String range = (minOpen ? "(" : "[") + fmt(min) + ", " + fmt(max) + (maxOpen ? ")" : "]");
        double v = p.isDefined(o) ? read(p, o, "a number in " + range, () -> p.getDouble(o)) : def;
        boolean ok = (minOpen ? v > min : v >= min) && (maxOpen ? v < max : v <= max);
        if (!ok) {
            throw invalid(p, o, "in " + range, fmt(v));
        }
        return v;
    }

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @param min smallest valid
     * @param max largest valid
     * @return the value, a whole number
     */
    public static int getInt(DriverExecutionProfile p, DriverOption o, int def, int min, int max) {
        String range = "[" + min + ", " + max + "]";
        if (!p.isDefined(o)) {
            return def;
        }
        // not p.getDouble: the profile caches each option's first typed read, and a Double cached
        // for an integer option breaks every later getInt of it (the driver's, the user's)
        Object stored = stored(p, o);
        double v = stored instanceof Number
                ? ((Number) stored).doubleValue()
                : read(p, o, "a whole number in " + range, () -> p.getInt(o));
        if (!(v >= min && v <= max) || v != Math.rint(v)) {
            throw invalid(p, o, "a whole number in " + range, fmt(v));
        }
        return (int) v;
    }

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @param min shortest valid (excluded when {@code minOpen})
     * @param minOpen whether {@code min} itself is invalid
     * @param max longest valid
     * @return the value
     */
    public static Duration getDuration(
            DriverExecutionProfile p, DriverOption o, Duration def, Duration min, boolean minOpen, Duration max) {
        String range = (minOpen ? "(" : "[") + fmt(min) + ", " + fmt(max) + "]";
        Duration v = p.isDefined(o) ? read(p, o, "a duration in " + range, () -> p.getDuration(o)) : def;
        int low = v.compareTo(min);
        if ((minOpen ? low <= 0 : low < 0) || v.compareTo(max) > 0) {
            throw invalid(p, o, "in " + range, fmt(v));
        }
        return v;
    }

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @param allowZero whether 0 is valid
     * @return the value, at most 365 days
     */
    public static Duration getDuration(DriverExecutionProfile p, DriverOption o, Duration def, boolean allowZero) {
        return getDuration(p, o, def, Duration.ZERO, !allowZero, MAX_DURATION);
    }

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @return the value
     */
    public static String getString(DriverExecutionProfile p, DriverOption o, String def) {
        return p.isDefined(o) ? read(p, o, "a string", () -> p.getString(o)) : def;
    }

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @return the value
     */
    public static boolean getBoolean(DriverExecutionProfile p, DriverOption o, boolean def) {
        return p.isDefined(o) ? read(p, o, "true or false", () -> p.getBoolean(o)) : def;
    }

    /**
     * @param p the profile
     * @param o the option
     * @param expected what the option must be ("in (0, 1)", "one of [a, b]")
     * @param value the value given, as shown to the user
     * @return the exception to throw: the option's path, what it must be, the value, the profile
     */
    public static IllegalArgumentException invalid(
            DriverExecutionProfile p, DriverOption o, String expected, String value) {
        return new IllegalArgumentException(
                o.getPath() + " must be " + expected + ", was " + value + " (profile " + p.getName() + ")");
    }

    /** Reads a value, turning the config library's type error into this class's message. */
    private static <T> T read(DriverExecutionProfile p, DriverOption o, String expected, Supplier<T> reader) {
        try {
            return reader.get();
        } catch (RuntimeException e) {
            IllegalArgumentException invalid = invalid(p, o, expected, raw(p, o));
            invalid.initCause(e);
            throw invalid;
        }
    }

    /** @return the option's value as the configuration holds it, read without the profile's cache */
    private static Object stored(DriverExecutionProfile p, DriverOption o) {
        for (java.util.Map.Entry<String, Object> e : p.entrySet()) {
            if (e.getKey().equals(o.getPath())) {
                return e.getValue();
            }
        }
        return null;
    }

    /** @return the option's value as text, as well as it can be read */
    private static String raw(DriverExecutionProfile p, DriverOption o) {
        try {
            return "'" + p.getString(o) + "'";
        } catch (RuntimeException e) {
            return "a value of another type";
        }
    }

    /** @return {@code 1} for 1.0, {@code 0.5} for 0.5, {@code NaN} for NaN */
    public static String fmt(double d) {
        return d == Math.rint(d) && !Double.isInfinite(d) ? Long.toString((long) d) : Double.toString(d);
    }

    /** @return "0", "5 ms", "-5 ms", "30 s", "365 days", or the ISO form for anything finer than 1 ms */
    public static String fmt(Duration d) {
        if (d.isZero()) {
            return "0";
        }
        if (d.isNegative()) {
            return "-" + fmt(d.negated());
        }
        if (d.getNano() % 1_000_000 != 0) {
            return d.toString();
        }
        long ms = d.toMillis();
        if (ms % 86_400_000L == 0) {
            long days = ms / 86_400_000L;
            return days + (days == 1 ? " day" : " days");
        }
        if (ms % 1000 == 0) {
            return (ms / 1000) + " s";
        }
        return ms + " ms";
    }
}

package io.github.hedge.cassandra.internal;

import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import com.datastax.oss.driver.api.core.config.DriverOption;
import java.time.Duration;

/** Reads optional driver options with defaults in code and validation that names the setting. */
public final class Options {
    private Options() {}

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @param min smallest valid (exclusive when {@code openLow})
     * @param max largest valid
     * @param openLow whether {@code min} itself is invalid
     * @return the value
     */
    public static double getDouble(
            DriverExecutionProfile p, DriverOption o, double def, double min, double max, boolean openLow) {
        double v = p.isDefined(o) ? p.getDouble(o) : def;
        boolean ok = (openLow ? v > min : v >= min) && v <= max;
        if (!ok) {
            throw new IllegalArgumentException(o.getPath() + " must be in " + (openLow ? "(" : "[") + min + ", " + max
                    + "], was " + v + " (profile " + p.getName() + ")");
        }
        return v;
    }

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @param min smallest valid
     * @param max largest valid
     * @return the value
     */
    public static int getInt(DriverExecutionProfile p, DriverOption o, int def, int min, int max) {
        int v = p.isDefined(o) ? p.getInt(o) : def;
        if (v < min || v > max) {
            throw new IllegalArgumentException(o.getPath() + " must be in [" + min + ", " + max + "], was " + v
                    + " (profile " + p.getName() + ")");
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
        Duration v = p.isDefined(o) ? p.getDuration(o) : def;
        if (v.isNegative() || (!allowZero && v.isZero()) || v.compareTo(Duration.ofDays(365)) > 0) {
            throw new IllegalArgumentException(o.getPath() + " must be in " + (allowZero ? "[0" : "(0")
                    + ", 365 days], was " + v + " (profile " + p.getName() + ")");
        }
        return v;
    }

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @return the value
     */
    public static String getString(DriverExecutionProfile p, DriverOption o, String def) {
        return p.isDefined(o) ? p.getString(o) : def;
    }

    /**
     * @param p the profile
     * @param o the option
     * @param def default
     * @return the value
     */
    public static boolean getBoolean(DriverExecutionProfile p, DriverOption o, boolean def) {
        return p.isDefined(o) ? p.getBoolean(o) : def;
    }
}

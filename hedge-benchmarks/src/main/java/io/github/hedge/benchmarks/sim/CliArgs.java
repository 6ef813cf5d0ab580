package io.github.hedge.benchmarks.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code --name value} options and {@code --flag} switches of one subcommand. Unknown options,
 * missing values and malformed numbers are {@link UsageException}s.
 */
public final class CliArgs {
    private final Map<String, String> values = new HashMap<>();
    private final Set<String> flags = new HashSet<>();

    private CliArgs() {}

    /**
     * @param args the arguments after the subcommand
     * @param valued options that take a value (without the leading {@code --})
     * @param switches options that take none
     * @return the parsed arguments
     */
    public static CliArgs parse(List<String> args, Set<String> valued, Set<String> switches) {
        CliArgs a = new CliArgs();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (!arg.startsWith("--")) {
                throw new UsageException("unexpected argument '" + arg + "'");
            }
            String name = arg.substring(2);
            String inline = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                inline = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (switches.contains(name) && inline == null) {
                a.flags.add(name);
            } else if (valued.contains(name)) {
                String v = inline;
                if (v == null) {
                    if (i + 1 >= args.size()) {
                        throw new UsageException("option --" + name + " needs a value");
                    }
                    v = args.get(++i);
                }
                a.values.put(name, v);
            } else {
                throw new UsageException("unknown option --" + name);
            }
        }
        return a;
    }

    /**
     * @param name a switch
     * @return whether it was given
     */
    public boolean flag(String name) {
        return flags.contains(name);
    }

    /**
     * @param name an option
     * @param def the default
     * @return its value, or {@code def}
     */
    public String string(String name, String def) {
        return values.getOrDefault(name, def);
    }

    /**
     * @param name an option
     * @param def the default
     * @param min the least value allowed
     * @param max the largest value allowed
     * @return its value, or {@code def}
     */
    public double number(String name, double def, double min, double max) {
        String v = values.get(name);
        if (v == null) {
            return def;
        }
        double d;
        try {
            d = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a number, was '" + v + "'");
        }
        if (!(d >= min && d <= max)) {
            throw new UsageException("--" + name + " must be in [" + min + ", " + max + "], was " + v);
        }
        return d;
    }

    /**
     * @param name an option
     * @param def the default
     * @param min the least value allowed
     * @param max the largest value allowed
     * @return its value, or {@code def}
     */
    public long integer(String name, long def, long min, long max) {
        String v = values.get(name);
        if (v == null) {
            return def;
        }
        long d;
        try {
            d = Long.parseLong(v.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be an integer, was '" + v + "'");
        }
        if (d < min || d > max) {
            throw new UsageException("--" + name + " must be in [" + min + ", " + max + "], was " + v);
        }
        return d;
    }

    /**
     * @param name an option holding numbers separated by commas
     * @param def the numbers used when it is not given
     * @param min the least value allowed
     * @param max the largest value allowed
     * @return its numbers, in order, or a copy of {@code def}
     */
    public double[] numbers(String name, double[] def, double min, double max) {
        String v = values.get(name);
        if (v == null) {
            return def.clone();
        }
        String[] parts = v.split(",", -1);
        double[] out = new double[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                out[i] = Double.parseDouble(parts[i].trim());
            } catch (NumberFormatException e) {
                throw new UsageException("--" + name + " must be numbers separated by commas, was '" + v + "'");
            }
            if (!(out[i] >= min && out[i] <= max)) {
                throw new UsageException("--" + name + " must be in [" + min + ", " + max + "], was " + parts[i]);
            }
        }
        return out;
    }

    /**
     * @param name an option holding integers separated by commas
     * @param def the integers used when it is not given
     * @param min the least value allowed
     * @param max the largest value allowed
     * @return its integers, in order, or a copy of {@code def}
     */
    public long[] integers(String name, long[] def, long min, long max) {
        String v = values.get(name);
        if (v == null) {
            return def.clone();
        }
        String[] parts = v.split(",", -1);
        long[] out = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                out[i] = Long.parseLong(parts[i].trim().replace("_", ""));
            } catch (NumberFormatException e) {
                throw new UsageException("--" + name + " must be integers separated by commas, was '" + v + "'");
            }
            if (out[i] < min || out[i] > max) {
                throw new UsageException("--" + name + " must be in [" + min + ", " + max + "], was " + parts[i]);
            }
        }
        return out;
    }

    /**
     * @param def the SPEC used when {@code --dist} is not given
     * @return the parsed {@code --dist}
     * @throws UsageException when the SPEC is bad
     */
    public Distribution dist(String def) {
        try {
            return Distribution.parse(string("dist", def));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /**
     * @param name an option holding SPECs separated by {@code ;}
     * @param def the SPECs used when it is not given
     * @return the parsed distributions, in order
     * @throws UsageException when a SPEC is bad
     */
    public List<Distribution> dists(String name, String[] def) {
        String v = values.get(name);
        List<Distribution> out = new ArrayList<>();
        for (String spec : v == null ? def : v.split(";")) {
            try {
                out.add(Distribution.parse(spec.trim()));
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }
        return out;
    }
}

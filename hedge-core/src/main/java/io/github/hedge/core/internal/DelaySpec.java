package io.github.hedge.core.internal;

import io.github.hedge.core.DelayPolicy;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses Cassandra's {@code speculative_retry} syntax into a {@link DelayPolicy}. Internal; used by
 * {@link DelayPolicy#parse(String)}. Stateless and thread-safe.
 */
public final class DelaySpec {
    private DelaySpec() {}

    private static final String FORMS =
            "NONE, ALWAYS, <p>p (99p), <duration> (50ms, 1s, 250us), MIN(<p>p,<duration>) or MAX(<p>p,<duration>)";
    private static final Pattern PERCENTILE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(?:p|percentile)");
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|µs|ms|s)");
    private static final Pattern COMBINED = Pattern.compile("(min|max)\\s*\\(\\s*([^,]+?)\\s*,\\s*([^,]+?)\\s*\\)");

    public static DelayPolicy parse(String spec) {
        if (spec == null) {
            throw new NullPointerException("delay spec must not be null");
        }
        String s = spec.trim().toLowerCase(Locale.ROOT);
        if (s.equals("none")) {
            return DelayPolicy.never();
        }
        if (s.equals("always")) {
            return DelayPolicy.fixed(Duration.ZERO);
        }
        Matcher c = COMBINED.matcher(s);
        if (c.matches()) {
            DelayPolicy a = single(c.group(2), spec);
            DelayPolicy b = single(c.group(3), spec);
            return c.group(1).equals("min") ? DelayPolicy.min(a, b) : DelayPolicy.max(a, b);
        }
        return single(s, spec);
    }

    private static DelayPolicy single(String s, String spec) {
        Matcher p = PERCENTILE.matcher(s);
        if (p.matches()) {
            double value = Double.parseDouble(p.group(1));
            if (!(value > 0 && value < 100)) {
                throw new IllegalArgumentException(
                        "delay spec percentile must be in (0, 100), was " + p.group(1) + " in \"" + spec + "\"");
            }
            return DelayPolicy.percentile(value / 100.0).build();
        }
        Matcher d = DURATION.matcher(s);
        if (d.matches()) {
            double amount = Double.parseDouble(d.group(1));
            double nanosPerUnit;
            switch (d.group(2)) {
                case "ns":
                    nanosPerUnit = 1;
                    break;
                case "us":
                case "µs":
                    nanosPerUnit = 1e3;
                    break;
                case "ms":
                    nanosPerUnit = 1e6;
                    break;
                default:
                    nanosPerUnit = 1e9;
            }
            return DelayPolicy.fixed(Duration.ofNanos(Math.round(amount * nanosPerUnit)));
        }
        throw new IllegalArgumentException("delay spec must be one of " + FORMS + ", was \"" + spec + "\"");
    }
}

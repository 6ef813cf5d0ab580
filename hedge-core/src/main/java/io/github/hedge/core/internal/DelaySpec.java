package io.github.hedge.core.internal;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses Cassandra's {@code speculative_retry} syntax. Internal; used by {@code
 * DelayPolicy.parse(String)}, which hands in the {@link Forms} that build its policies, so this
 * parser knows the syntax and nothing of the policies. Stateless and thread-safe.
 */
public final class DelaySpec {
    private DelaySpec() {}

    /**
     * What a spec can say, built by the caller: the parser calls one method per form, in the
     * order the spec names them.
     *
     * @param <P> what the caller builds (a delay policy)
     */
    public interface Forms<P> {
        /** @return the form {@code NONE}: never hedge */
        P never();

        /** @return a fixed delay ({@code ALWAYS} is zero) */
        P fixed(Duration delay);

        /** @return a delay at {@code quantile}, in (0, 1) */
        P percentile(double quantile);

        /** @return the shorter of two delays ({@code MIN(a,b)}) */
        P min(P a, P b);

        /** @return the longer of two delays ({@code MAX(a,b)}) */
        P max(P a, P b);
    }

    private static final String FORMS =
            "NONE, ALWAYS, <p>p (99p), <duration> (50ms, 1s, 250us), MIN(<p>p,<duration>) or MAX(<p>p,<duration>)";
    private static final Pattern PERCENTILE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(?:p|percentile)");
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|µs|ms|s)");
    private static final Pattern COMBINED = Pattern.compile("(min|max)\\s*\\(\\s*([^,]+?)\\s*,\\s*([^,]+?)\\s*\\)");

    public static <P> P parse(String spec, Forms<P> forms) {
        if (spec == null) {
            throw new NullPointerException("delay spec must not be null");
        }
        String s = spec.trim().toLowerCase(Locale.ROOT);
        if (s.equals("none")) {
            return forms.never();
        }
        if (s.equals("always")) {
            return forms.fixed(Duration.ZERO);
        }
        Matcher c = COMBINED.matcher(s);
        if (c.matches()) {
            P a = single(c.group(2), spec, forms);
            P b = single(c.group(3), spec, forms);
            return c.group(1).equals("min") ? forms.min(a, b) : forms.max(a, b);
        }
        return single(s, spec, forms);
    }

    private static <P> P single(String s, String spec, Forms<P> forms) {
        Matcher p = PERCENTILE.matcher(s);
        if (p.matches()) {
            double value = Double.parseDouble(p.group(1));
            if (!(value > 0 && value < 100)) {
                throw new IllegalArgumentException(
                        "delay spec percentile must be in (0, 100), was " + p.group(1) + " in \"" + spec + "\"");
            }
            return forms.percentile(value / 100.0);
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
            return forms.fixed(Duration.ofNanos(Math.round(amount * nanosPerUnit)));
        }
        throw new IllegalArgumentException("delay spec must be one of " + FORMS + ", was \"" + spec + "\"");
    }
}

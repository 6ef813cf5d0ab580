package io.github.hedge.core;

import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.internal.DelaySpec;
import java.time.Duration;

/**
 * Decides how long to wait, after an attempt started, before the next attempt of the same call
 * is sent. Usable on its own, outside {@link HedgedExecutor}: "what is the delay before attempt
 * k now?" is one call to {@link #delayNanos(DelayContext)}.
 *
 * <p>Built-in policies are immutable value objects validated when built: {@link #fixed},
 * {@link #increasing}, {@link #exponential}, {@link #percentile} and the combinators {@link #min}
 * and {@link #max}. Implementations must be thread-safe and fast: the executor calls them on the
 * call path.
 */
@FunctionalInterface
public interface DelayPolicy {
    /** Returned by {@link #delayNanos} to say: send no further attempt. */
    long NO_HEDGE = -1L;

    /**
     * @param context the call's state: which attempt is next, targets tried, recent latency
     * @return the delay in nanoseconds (>= 0) to wait after the latest attempt started, or
     *     {@link #NO_HEDGE} to send no further attempt
     */
    long delayNanos(DelayContext context);

    /**
     * Where this policy's delay comes from now, for observability: {@link DelaySource#POLICY} unless
     * the policy says more ({@link PercentileDelay} tells its estimate from its warm-up).
     *
     * @param context what the policy may look at, as for {@link #delayNanos}
     * @return the source of the delay {@link #delayNanos} would return now
     */
    default DelaySource source(DelayContext context) {
        return DelaySource.POLICY;
    }

    /**
     * How many samples a latency window should keep for this policy's estimate to be good: what
     * {@link LatencyTracker.Builder#sizedFor(DelayPolicy)} (and so the executor's own tracker) keeps at
     * low rates. A policy that reads no latency (the default, and {@link #fixed}, {@link #increasing},
     * {@link #exponential}, {@link #never}) returns 0; {@link PercentileDelay#windowSamples()} asks for
     * {@code 300 / (1 - p)}; {@link #min} and {@link #max} ask for the larger of their two, so {@code
     * MIN(99p,50ms)} keeps as many samples as {@code 99p}.
     *
     * @return samples, >= 0
     */
    default long windowSamples() {
        return 0;
    }

    /**
     * A constant delay before every hedge.
     *
     * @param delay the delay; must be >= 0 (0 hedges at once)
     * @return the policy
     */
    static DelayPolicy fixed(Duration delay) {
        return new FixedDelay(Checks.nonNegative("delay", delay));
    }

    /**
     * A delay that grows linearly with the attempt number, as gocql's
     * {@code IncreasingSpeculativeExecution}: {@code initial + (k - 2) * step}, capped at {@code max},
     * before attempt {@code k}.
     *
     * @param initial the delay before the first hedge; must be >= 0
     * @param step added for each further hedge; must be >= 0
     * @param max the largest delay; must be >= initial
     * @return the policy
     */
    static DelayPolicy increasing(Duration initial, Duration step, Duration max) {
        return IncreasingDelay.linear(initial, step, max);
    }

    /**
     * A delay that grows geometrically: {@code initial * multiplier^(k - 2)}, capped at {@code max},
     * before attempt {@code k}.
     *
     * @param initial the delay before the first hedge; must be > 0
     * @param multiplier growth per hedge; must be >= 1
     * @param max the largest delay; must be >= initial
     * @return the policy
     */
    static DelayPolicy exponential(Duration initial, double multiplier, Duration max) {
        return IncreasingDelay.exponential(initial, multiplier, max);
    }

    /**
     * Starts building an adaptive policy: the delay is the {@code p}-th percentile of recent
     * per-attempt latency.
     *
     * @param p the percentile as a fraction, in (0, 1): 0.95 for p95
     * @return a builder
     */
    static PercentileDelay.Builder percentile(double p) {
        return PercentileDelay.builder(p);
    }

    /**
     * The smaller of two delays, like Cassandra's {@code MIN(99p,50ms)}. A policy that returns
     * {@link #NO_HEDGE} counts as an infinite delay, so the other one decides.
     *
     * @param a a policy
     * @param b another policy
     * @return the combined policy
     */
    static DelayPolicy min(DelayPolicy a, DelayPolicy b) {
        return new Combined(Checks.notNull("a", a), Checks.notNull("b", b), true);
    }

    /**
     * The larger of two delays, like Cassandra's {@code MAX(99p,50ms)}. A policy that returns
     * {@link #NO_HEDGE} counts as an infinite delay, so the result is {@link #NO_HEDGE}.
     *
     * @param a a policy
     * @param b another policy
     * @return the combined policy
     */
    static DelayPolicy max(DelayPolicy a, DelayPolicy b) {
        return new Combined(Checks.notNull("a", a), Checks.notNull("b", b), false);
    }

    /**
     * Parses Cassandra's {@code speculative_retry} syntax, for configuration files and properties:
     *
     * <ul>
     *   <li>{@code NONE}: {@link #never()}; {@code ALWAYS}: {@code fixed(0)};
     *   <li>{@code 99p} (or {@code 99PERCENTILE}, {@code 99.9p}): {@code percentile(0.99).build()};
     *   <li>{@code 50ms} (units {@code ns}, {@code us}, {@code ms}, {@code s}): {@code fixed(50 ms)};
     *   <li>{@code MIN(99p,50ms)}, {@code MAX(99p,50ms)}: {@link #min} and {@link #max} of the two, so
     *       {@code MIN} hedges after 50 ms while the percentile is still warming up and {@code MAX}
     *       does not hedge until it is warm.
     * </ul>
     *
     * Case and spaces do not matter.
     *
     * @param spec the specification
     * @return the policy
     * @throws IllegalArgumentException naming the accepted forms and the value given
     */
    static DelayPolicy parse(String spec) {
        return DelaySpec.parse(spec, new DelaySpec.Forms<DelayPolicy>() {
            @Override
            public DelayPolicy never() {
                return DelayPolicy.never();
            }

            @Override
            public DelayPolicy fixed(Duration delay) {
                return DelayPolicy.fixed(delay);
            }

            @Override
            public DelayPolicy percentile(double quantile) {
                return DelayPolicy.percentile(quantile).build();
            }

            @Override
            public DelayPolicy min(DelayPolicy a, DelayPolicy b) {
                return DelayPolicy.min(a, b);
            }

            @Override
            public DelayPolicy max(DelayPolicy a, DelayPolicy b) {
                return DelayPolicy.max(a, b);
            }
        });
    }

    /** @return a policy that never hedges: every call runs one attempt (plus retries of failures) */
    static DelayPolicy never() {
        return Never.INSTANCE;
    }

    /** The policy returned by {@link #fixed}. Immutable. */
    final class FixedDelay implements DelayPolicy {
        private final Duration delay;
        private final long nanos;

        private FixedDelay(Duration delay) {
            this.delay = delay;
            this.nanos = delay.toNanos();
        }

        @Override
        public long delayNanos(DelayContext context) {
            return nanos;
        }

        /** @return the delay */
        public Duration delay() {
            return delay;
        }

        @Override
        public String toString() {
            return "fixed(" + delay + ")";
        }
    }

    /** The policy returned by {@link #never}. */
    enum Never implements DelayPolicy {
        INSTANCE;

        @Override
        public long delayNanos(DelayContext context) {
            return NO_HEDGE;
        }

        @Override
        public String toString() {
            return "never";
        }
    }

    /** The policy returned by {@link #min} and {@link #max}. Immutable. */
    final class Combined implements DelayPolicy {
        private final DelayPolicy a;
        private final DelayPolicy b;
        private final boolean min;

        private Combined(DelayPolicy a, DelayPolicy b, boolean min) {
            this.a = a;
            this.b = b;
            this.min = min;
        }

        @Override
        public long delayNanos(DelayContext context) {
            long x = a.delayNanos(context);
            long y = b.delayNanos(context);
            if (min) {
                if (x < 0) return y;
                if (y < 0) return x;
                return Math.min(x, y);
            }
            if (x < 0 || y < 0) return NO_HEDGE;
            return Math.max(x, y);
        }

        @Override
        public long windowSamples() {
            return Math.max(a.windowSamples(), b.windowSamples());
        }

        @Override
        public String toString() {
            return (min ? "min(" : "max(") + a + ", " + b + ")";
        }
    }
}

package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.spring.boot.autoconfigure.HedgeProperties.Instance;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Merges one instance with {@code hedge.defaults} and checks every value against the range the core
 * accepts, naming the property the value came from. Stateless.
 */
final class SettingsResolver {
    /** The longest duration the core accepts for any setting. */
    static final Duration MAX_DURATION = Duration.ofDays(365);

    private static final String DEFAULTS = "hedge.defaults.";

    private SettingsResolver() {}

    /** One instance's merged, checked settings and the delay policy built from them. */
    record Resolved(HedgeInstanceSettings settings, DelayPolicy delayPolicy) {}

    /**
     * @param name the instance name
     * @param d the defaults block
     * @param i the instance's own block, or null for an instance that is not listed
     * @return the merged settings
     * @throws InvalidHedgePropertyException naming the first invalid property
     */
    static Resolved resolve(String name, HedgeProperties.Defaults d, HedgeProperties.Instance i) {
        String own = "hedge.instances." + name + ".";
        Picked<Integer> attempts = pick(own, i, Instance::getMaxAttempts, d.getMaxAttempts(), "max-attempts");
        Integer maxAttempts = attempts.value();
        if (maxAttempts == null || maxAttempts < 1 || maxAttempts > HedgeConfig.MAX_ATTEMPTS_LIMIT) {
            throw new InvalidHedgePropertyException(
                    attempts.property(), maxAttempts, "in [1, " + HedgeConfig.MAX_ATTEMPTS_LIMIT + "]");
        }

        Picked<Double> extra = pick(own, i, Instance::getMaxExtraLoad, d.getMaxExtraLoad(), "max-extra-load");
        Double load = extra.value();
        if (load == null || !(load > 0.0 && load < 1.0)) {
            throw new InvalidHedgePropertyException(extra.property(), load, "in (0, 1)");
        }

        Picked<Duration> min = pick(own, i, Instance::getMinDelay, d.getMinDelay(), "min-delay");
        Duration minDelay = min.value();
        nonNegative(min.property(), minDelay);
        Picked<Duration> max = pick(own, i, Instance::getMaxDelay, d.getMaxDelay(), "max-delay");
        Duration maxDelay = max.value();
        positive(max.property(), maxDelay);
        if (minDelay.compareTo(maxDelay) > 0) {
            throw new InvalidHedgePropertyException(
                    min.property(), fmt(minDelay), "<= " + max.property() + " (" + fmt(maxDelay) + ")");
        }

        Picked<Duration> deadline = pick(own, i, Instance::getTimeout, d.getTimeout(), "timeout");
        Duration timeout = deadline.value();
        if (timeout != null) {
            positive(deadline.property(), timeout);
        }

        Picked<Duration> slowLog =
                pick(own, i, Instance::getSlowCallThreshold, d.getSlowCallThreshold(), "slow-call-threshold");
        Duration slow = slowLog.value();
        if (slow != null) {
            positive(slowLog.property(), slow);
        }

        Picked<Duration> savings = pick(own, i, Instance::getSavingsWindow, d.getSavingsWindow(), "savings-window");
        positive(savings.property(), savings.value());

        Picked<Double> loserSampling = pick(own, i, Instance::getLoserSampling, d.getLoserSampling(), "loser-sampling");
        Double sampling = loserSampling.value();
        if (sampling == null || !(sampling >= 0.0 && sampling <= 1.0)) {
            throw new InvalidHedgePropertyException(loserSampling.property(), sampling, "in [0, 1]");
        }

        Boolean idem = pick(own, i, Instance::getIdempotent, d.getIdempotent(), "idempotent")
                .value();
        boolean idempotent = idem != null && idem;

        // the delay: the instance's own block if it sets any delay.*, else the defaults' block
        HedgeProperties.Delay delay;
        String delayPrefix;
        HedgeProperties.Delay fallback = null;
        if (i != null && !i.getDelay().isEmpty()) {
            delay = i.getDelay();
            delayPrefix = own + "delay.";
            fallback = d.getDelay();
        } else {
            delay = d.getDelay();
            delayPrefix = DEFAULTS + "delay.";
        }
        List<String> kinds = new ArrayList<>();
        if (delay.getPercentile() != null) kinds.add("percentile");
        if (delay.getFixed() != null) kinds.add("fixed");
        if (!delay.getIncreasing().isEmpty()) kinds.add("increasing");
        if (kinds.size() > 1) {
            throw new InvalidHedgePropertyException(
                    delayPrefix + "*", String.join(" and ", kinds), "one of percentile, fixed or increasing");
        }
        String kind = kinds.isEmpty() ? "percentile" : kinds.get(0);
        DelayPolicy policy;
        String description;
        switch (kind) {
            case "fixed": {
                Duration fixed = delay.getFixed();
                nonNegative(delayPrefix + "fixed", fixed);
                Duration clamped = clamp(fixed, minDelay, maxDelay);
                policy = DelayPolicy.fixed(clamped);
                description = "fixed " + fmt(clamped);
                break;
            }
            case "increasing": {
                HedgeProperties.Increasing inc = delay.getIncreasing();
                HedgeProperties.Increasing inherited =
                        fallback != null && fallback.getIncreasing() != null ? fallback.getIncreasing() : null;
                Duration initial =
                        inc.getInitial() != null ? inc.getInitial() : inherited != null ? inherited.getInitial() : null;
                Duration step = inc.getStep() != null ? inc.getStep() : inherited != null ? inherited.getStep() : null;
                Duration incMax = inc.getMax() != null ? inc.getMax() : inherited != null ? inherited.getMax() : null;
                nonNegative(delayPrefix + "increasing.initial", initial);
                nonNegative(delayPrefix + "increasing.step", step);
                Duration cap = incMax == null ? maxDelay : incMax;
                if (incMax != null) {
                    nonNegative(delayPrefix + "increasing.max", incMax);
                    if (incMax.compareTo(maxDelay) > 0) {
                        cap = maxDelay;
                    }
                }
                if (initial.compareTo(cap) > 0) {
                    throw new InvalidHedgePropertyException(
                            delayPrefix + "increasing.initial",
                            fmt(initial),
                            "<= increasing.max and max-delay (" + fmt(cap) + ")");
                }
                policy = DelayPolicy.increasing(initial, step, cap);
                if (minDelay.compareTo(initial) > 0) {
                    policy = DelayPolicy.max(policy, DelayPolicy.fixed(minDelay));
                }
                description = "increasing " + fmt(initial) + " +" + fmt(step) + " max " + fmt(cap)
                        + (minDelay.compareTo(initial) > 0 ? " min " + fmt(minDelay) : "");
                break;
            }
            default: {
                double percentile;
                // derived from max-extra-load: the core's one knob (HedgeConfig.Builder#maxExtraLoad),
                // whose delay aims at less demand while the budget runs low; a percentile given
                // explicitly is taken as asked
                boolean feedback = delay.getPercentile() == null;
                if (delay.getPercentile() != null) {
                    percentile = delay.getPercentile();
                    if (!(percentile > 0.0 && percentile < 1.0)) {
                        throw new InvalidHedgePropertyException(delayPrefix + "percentile", percentile, "in (0, 1)");
                    }
                } else {
                    percentile = 1.0 - load;
                }
                PercentileDelay adaptive = DelayPolicy.percentile(percentile)
                        .min(minDelay)
                        .max(maxDelay)
                        .budgetFeedback(feedback)
                        .build();
                policy = adaptive;
                description = HedgeInstanceSettings.describe(adaptive);
                break;
            }
        }
        HedgeInstanceSettings settings = new HedgeInstanceSettings(
                maxAttempts,
                description,
                load,
                minDelay,
                maxDelay,
                timeout,
                idempotent,
                slow,
                savings.value(),
                sampling);
        return new Resolved(settings, policy);
    }

    /**
     * @param name the instance name, for error messages
     * @param r the resolved settings
     * @return a builder holding them
     */
    static HedgeConfig.Builder toBuilder(String name, Resolved r) {
        HedgeInstanceSettings s = r.settings();
        try {
            HedgeConfig.Builder b = HedgeConfig.builder()
                    .maxAttempts(s.maxAttempts())
                    .delay(r.delayPolicy())
                    .budgetRatio(s.maxExtraLoad())
                    .idempotentByDefault(s.idempotent())
                    .savingsWindow(s.savingsWindow())
                    .loserSampling(s.loserSampling());
            if (s.timeout() != null) {
                b.deadline(s.timeout());
            }
            return b;
        } catch (IllegalArgumentException e) {
            // the checks above mirror the core's; should they ever drift, still name the instance
            throw new InvalidHedgePropertyException("hedge.instances." + name, e.getMessage(), "valid");
        }
    }

    /** A merged value and the property it came from ({@code hedge.instances.<name>.x} or {@code hedge.defaults.x}). */
    private record Picked<T>(T value, String property) {}

    /**
     * @param own the instance's property prefix
     * @param i the instance's block, or null for an instance that is not listed
     * @param mine reads the instance's own value (null when unset)
     * @param defaults the defaults block's value
     * @param key the property's name within a block, such as {@code max-delay}
     * @return the instance's own value when it sets one, else the defaults'
     */
    private static <T> Picked<T> pick(
            String own,
            HedgeProperties.Instance i,
            Function<HedgeProperties.Instance, T> mine,
            T defaults,
            String key) {
        T value = i == null ? null : mine.apply(i);
        return value != null ? new Picked<>(value, own + key) : new Picked<>(defaults, DEFAULTS + key);
    }

    private static void nonNegative(String property, Duration value) {
        if (value == null) {
            throw new InvalidHedgePropertyException(property, null, "set (a duration >= 0)");
        }
        if (value.isNegative() || value.compareTo(MAX_DURATION) > 0) {
            throw new InvalidHedgePropertyException(property, fmt(value), "in [0, 365d]");
        }
    }

    private static void positive(String property, Duration value) {
        if (value == null) {
            throw new InvalidHedgePropertyException(property, null, "set (a duration > 0)");
        }
        if (value.isNegative() || value.isZero() || value.compareTo(MAX_DURATION) > 0) {
            throw new InvalidHedgePropertyException(property, fmt(value), "in (0, 365d]");
        }
    }

    private static Duration clamp(Duration v, Duration min, Duration max) {
        return v.compareTo(min) < 0 ? min : v.compareTo(max) > 0 ? max : v;
    }

    /** A duration the way it is written in properties: {@code 20ms}, {@code 10s}, else ISO-8601. */
    static String fmt(Duration d) {
        if (d == null) {
            return "null";
        }
        if (d.isZero()) {
            return "0ms";
        }
        if (d.compareTo(MAX_DURATION) > 0 || d.isNegative()) {
            return d.toString();
        }
        if (d.toNanos() % 1_000_000_000L == 0 && Math.abs(d.getSeconds()) < 60) {
            return d.getSeconds() + "s";
        }
        if (d.toNanos() % 1_000_000L == 0) {
            return d.toMillis() + "ms";
        }
        return d.toString();
    }
}

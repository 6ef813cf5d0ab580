package io.github.hedge.cassandra;

import com.datastax.oss.driver.api.core.config.DriverOption;

/**
 * hedge's own driver options, set like any other option of the driver (in {@code application.conf},
 * a programmatic config loader, or Spring Boot's {@code DriverConfigLoaderBuilderCustomizer}) and
 * overridable per execution profile. Every option has a default in code, so none is required. A
 * bad value fails when the session starts, naming the option, its valid range and the value.
 *
 * <p>The speculative-execution options live inside {@code advanced.speculative-execution-policy}
 * and the ordering options inside {@code basic.load-balancing-policy}: the driver builds one policy
 * instance per distinct content of that section, so a profile that changes one of them gets its
 * own policy (own delay, budget and latency tracker). The driver's own {@code
 * advanced.speculative-execution-policy.max-executions} (default 2 here) and {@code .delay} (used
 * by {@code delay-kind = fixed}) keep their meaning.
 */
public enum HedgeDriverOption implements DriverOption {
    /**
     * {@code percentile} (default: adaptive) or {@code fixed} (the driver's {@code .delay}, which must
     * then be set).
     */
    DELAY_KIND("advanced.speculative-execution-policy.hedge.delay-kind"),
    /**
     * The percentile of recent latency to hedge after, in (0, 1); default {@code 1 - 0.8 *
     * max-extra-load} clamped to {@code [0.5, 0.999]} (p96 for 5%), so expected demand leaves a
     * fifth of the budget for bursts.
     */
    PERCENTILE("advanced.speculative-execution-policy.hedge.percentile"),
    /** The smallest adaptive delay (duration); default 1 ms. */
    MIN_DELAY("advanced.speculative-execution-policy.hedge.min-delay"),
    /**
     * The largest adaptive delay (duration), CASSANDRA-14293's {@code MIN(p, cap)}: one bad node
     * cannot drag the delay above it; default 1 s.
     */
    MAX_DELAY("advanced.speculative-execution-policy.hedge.max-delay"),
    /**
     * Samples needed before the percentile is used; before, the warm-up delay decides ({@link
     * #WARM_UP}), or nothing is hedged when it is off; default 100.
     */
    MIN_SAMPLES("advanced.speculative-execution-policy.hedge.min-samples"),
    /**
     * Whether a new session hedges before the percentile has its first estimate (boolean, default
     * true; {@code percentile} delay kind only): at 4 times the median node's latency so far (at
     * least 4 ms, at most {@code max-delay}), with 20 budget tokens as starting
     * credit. Needs {@link HedgeLoadBalancingPolicy}, which measures the nodes.
     */
    WARM_UP("advanced.speculative-execution-policy.hedge.warm-up"),
    /** Extra executions allowed per idempotent request (the budget), in [0, 1]; default 0.05. */
    MAX_EXTRA_LOAD("advanced.speculative-execution-policy.hedge.max-extra-load"),
    /**
     * The budget's and the latency tracker's sliding window (duration), in [1 s, 600 s] (the tracker
     * refreshes once a second and keeps at most 600 slices); default 30 s.
     */
    WINDOW("advanced.speculative-execution-policy.hedge.window"),

    /** The wrapped load-balancing policy's class; default the driver's {@code DefaultLoadBalancingPolicy}. */
    LBP_DELEGATE_CLASS("basic.load-balancing-policy.hedge.delegate-class"),
    /** Whether nodes are reordered by latency (boolean); default false in the policy mode. */
    LBP_LATENCY_AWARE("basic.load-balancing-policy.hedge.latency-aware"),
    /** See {@link LatencyAwareOptions#exclusionThreshold()}; default 2.0. */
    LBP_EXCLUSION_THRESHOLD("basic.load-balancing-policy.hedge.exclusion-threshold"),
    /** See {@link LatencyAwareOptions#scale()}; default 100 ms. */
    LBP_SCALE("basic.load-balancing-policy.hedge.scale"),
    /** See {@link LatencyAwareOptions#retryPeriod()}; default 10 s. */
    LBP_RETRY_PERIOD("basic.load-balancing-policy.hedge.retry-period"),
    /** See {@link LatencyAwareOptions#minMeasurements()}; default 5. */
    LBP_MIN_MEASUREMENTS("basic.load-balancing-policy.hedge.min-measurements");

    private final String path;

    HedgeDriverOption(String path) {
        this.path = path;
    }

    @Override
    public String getPath() {
        return path;
    }
}

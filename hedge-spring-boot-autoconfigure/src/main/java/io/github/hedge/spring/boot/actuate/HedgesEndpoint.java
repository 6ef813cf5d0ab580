package io.github.hedge.spring.boot.actuate;

import io.github.hedge.core.BudgetSnapshot;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeSavings;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.LatencySummary;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstanceSettings;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import io.github.hedge.spring.boot.autoconfigure.InvalidHedgePropertyException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.lang.Nullable;

/**
 * The {@code hedges} actuator endpoint: each instance's (and each adapter executor's, such as a gRPC
 * method's) effective configuration, current delay,
 * recent per-attempt latency, budget and counters ({@code GET /actuator/hedges}, {@code GET
 * /actuator/hedges/{name}}), and a write operation that changes an instance's delay, budget or
 * attempts at runtime ({@code POST /actuator/hedges/{name}} with a JSON body such as {@code
 * {"fixed":"20ms"}} or {@code {"percentile":0.99,"maxExtraLoad":0.02}}), applied through {@link
 * HedgeInstances#update}.
 *
 * <p>Latencies are in milliseconds. Counters are those of the instance's current executor: they
 * restart at zero when the instance is reconfigured. {@code saved} shows what hedging saved on the
 * instance's own traffic ({@link HedgedExecutor#savings()}): the latency its calls had beside the
 * core's censoring-aware estimate of the latency they would have had without hedging.
 *
 * <p>Thread-safe; every read is a fresh snapshot.
 */
@Endpoint(id = "hedges")
public class HedgesEndpoint {
    private final HedgeInstances instances;

    /** @param instances the named instances */
    public HedgesEndpoint(HedgeInstances instances) {
        this.instances = Objects.requireNonNull(instances, "instances must not be null");
    }

    /** @return every instance, by name */
    @ReadOperation
    public HedgesDescriptor hedges() {
        Map<String, InstanceDescriptor> all = new LinkedHashMap<>();
        for (String name : instances.names()) {
            InstanceDescriptor d = instance(name);
            if (d != null) {
                all.put(name, d);
            }
        }
        return new HedgesDescriptor(all);
    }

    /**
     * @param name an instance name
     * @return the instance, or null (404) if there is none of that name
     */
    @ReadOperation
    public InstanceDescriptor instance(@Selector String name) {
        HedgeInstanceSettings settings = instances.settings(name).orElse(null);
        if (settings != null) {
            return describe(settings, instances.executor(name));
        }
        // an executor an adapter created in the registry (a gRPC method's): described by its own configuration
        return instances
                .registry()
                .find(name)
                .map(e -> describe(settings(e.config()), e))
                .orElse(null);
    }

    /**
     * An adapter's executor has no properties of its own to show: what its configuration says, the
     * delay written as for an instance where the policy is one properties can make.
     */
    private static HedgeInstanceSettings settings(HedgeConfig c) {
        DelayPolicy delay = c.delayPolicy();
        String described = delay.toString();
        Duration min = null;
        Duration max = null;
        if (delay instanceof DelayPolicy.FixedDelay f) {
            described = "fixed " + text(f.delay());
        } else if (delay instanceof PercentileDelay p) {
            min = p.min();
            max = p.max();
            described = HedgeInstanceSettings.describe(p);
        }
        return new HedgeInstanceSettings(
                c.maxAttempts(),
                described,
                c.budgetRatio(),
                min,
                max,
                c.deadline().orElse(null),
                c.idempotentByDefault(),
                null,
                c.savingsWindow(),
                c.loserSampling());
    }

    /**
     * Changes an instance at runtime (see {@link HedgeInstances#update}). Give at most one of {@code
     * percentile} and {@code fixed}; setting one replaces the instance's delay kind.
     *
     * @param name the instance
     * @param percentile the new adaptive delay's percentile, in (0, 1)
     * @param fixed the new fixed delay, e.g. {@code 20ms}
     * @param maxExtraLoad the new budget, in (0, 1)
     * @param maxAttempts the new most attempts per call, in [1, 16]
     * @return the instance after the change
     * @throws InvalidEndpointRequestException (400 Bad Request) naming the property, its range and the
     *     value, if a value is out of range; nothing changes then
     */
    @WriteOperation
    public InstanceDescriptor update(
            @Selector String name,
            @Nullable Double percentile,
            @Nullable Duration fixed,
            @Nullable Double maxExtraLoad,
            @Nullable Integer maxAttempts) {
        if (percentile != null && fixed != null) {
            throw badRequest(new InvalidHedgePropertyException(
                    "hedge.instances." + name + ".delay.*", "percentile and fixed", "one of percentile or fixed"));
        }
        try {
            instances.update(name, i -> {
                if (percentile != null || fixed != null) {
                    i.getDelay().setPercentile(percentile);
                    i.getDelay().setFixed(fixed);
                    i.getDelay().getIncreasing().setInitial(null);
                    i.getDelay().getIncreasing().setStep(null);
                    i.getDelay().getIncreasing().setMax(null);
                }
                if (maxExtraLoad != null) {
                    i.setMaxExtraLoad(maxExtraLoad);
                }
                if (maxAttempts != null) {
                    i.setMaxAttempts(maxAttempts);
                }
            });
        } catch (InvalidHedgePropertyException e) {
            throw badRequest(e);
        } catch (IllegalArgumentException e) { // an adapter's executor
            InvalidEndpointRequestException bad = new InvalidEndpointRequestException(e.getMessage(), e.getMessage());
            bad.initCause(e);
            throw bad;
        }
        return instance(name);
    }

    /** Actuator answers 400 Bad Request with the message for this exception type. */
    private static InvalidEndpointRequestException badRequest(InvalidHedgePropertyException e) {
        InvalidEndpointRequestException bad = new InvalidEndpointRequestException(e.getMessage(), e.getMessage());
        bad.initCause(e);
        return bad;
    }

    private static InstanceDescriptor describe(HedgeInstanceSettings s, HedgedExecutor executor) {
        long delay = executor.currentDelayNanos();
        LatencySummary l = executor.latencyTracker().summary();
        BudgetSnapshot b = executor.budget().snapshot();
        return new InstanceDescriptor(
                new ConfigDescriptor(
                        s.maxAttempts(),
                        s.delay(),
                        s.maxExtraLoad(),
                        text(s.minDelay()),
                        text(s.maxDelay()),
                        text(s.timeout()),
                        s.idempotent(),
                        text(s.slowCallThreshold()),
                        text(s.savingsWindow()),
                        s.loserSampling()),
                delay == DelayPolicy.NO_HEDGE ? null : delay / 1e6,
                new LatencyDescriptor(
                        l.count(),
                        ms(l.p50Nanos()),
                        ms(l.p90Nanos()),
                        ms(l.p95Nanos()),
                        ms(l.p99Nanos()),
                        ms(l.p999Nanos()),
                        ms(l.maxNanos())),
                new BudgetDescriptor(
                        finite(b.ratio()),
                        finite(b.remaining()),
                        b.primariesInWindow(),
                        b.hedgesInWindow(),
                        b.totalGranted(),
                        b.totalDenied()),
                saved(executor.savings()),
                executor.stats());
    }

    private static SavedDescriptor saved(HedgeSavings s) {
        LatencySummary h = s.hedged();
        LatencySummary u = s.unhedgedEstimate();
        return new SavedDescriptor(
                h.count(),
                ms(h.p50Nanos()),
                ms(h.p99Nanos()),
                ms(h.p999Nanos()),
                ms(u.p50Nanos()),
                ms(u.p99Nanos()),
                ms(u.p999Nanos()),
                s.censoredPrimaries(),
                s.supportedPercentiles(),
                s.extraLoad(),
                s.toString());
    }

    private static Double ms(long nanos) {
        return nanos < 0 ? null : nanos / 1e6;
    }

    private static Double finite(double d) {
        return Double.isFinite(d) ? d : null;
    }

    private static String text(Duration d) {
        return HedgeInstanceSettings.text(d);
    }

    /**
     * Every instance.
     *
     * @param instances by name
     */
    public record HedgesDescriptor(Map<String, InstanceDescriptor> instances) {}

    /**
     * One instance.
     *
     * @param config its effective configuration
     * @param currentDelayMs the delay the first hedge of a call starting now would get, in ms; null
     *     while the policy would not hedge (an adaptive delay before its first answer)
     * @param latency recent per-attempt latency over the tracker's window
     * @param budget the hedge budget now
     * @param saved what hedging saved over the recent window
     * @param counters calls, attempts, hedges sent and won, denials... since the executor was built
     */
    public record InstanceDescriptor(
            ConfigDescriptor config,
            Double currentDelayMs,
            LatencyDescriptor latency,
            BudgetDescriptor budget,
            SavedDescriptor saved,
            HedgeStats counters) {}

    /**
     * What hedging saved over the executor's savings window, latencies in milliseconds (null when
     * the window is empty): the calls as they were, and the estimate of their primaries without
     * hedging, cancelled primaries counted as lower bounds.
     *
     * @param calls successful calls in the window
     * @param hedgedP50Ms median latency of the calls
     * @param hedgedP99Ms their 99th percentile
     * @param hedgedP999Ms their 99.9th percentile
     * @param unhedgedP50Ms estimated median without hedging
     * @param unhedgedP99Ms estimated 99th percentile without hedging
     * @param unhedgedP999Ms estimated 99.9th percentile without hedging (a lower bound where every
     *     primary that slow was cancelled)
     * @param censoredPrimaries primaries in the window cancelled before they answered
     * @param supportedPercentiles the percentiles whose unhedged estimate the data support ({@link
     *     HedgeSavings#supportedPercentiles()}); read the others as rough figures
     * @param extraLoad hedges sent per call since the executor was built
     * @param summary one line, e.g. {@code p99 412.0 ms -> 38.0 ms, ... for 4.8% extra}
     */
    public record SavedDescriptor(
            long calls,
            Double hedgedP50Ms,
            Double hedgedP99Ms,
            Double hedgedP999Ms,
            Double unhedgedP50Ms,
            Double unhedgedP99Ms,
            Double unhedgedP999Ms,
            long censoredPrimaries,
            List<Double> supportedPercentiles,
            double extraLoad,
            String summary) {}

    /**
     * An instance's effective configuration; durations as {@code 20ms}.
     *
     * @param maxAttempts most attempts per call
     * @param delay the delay policy, described
     * @param maxExtraLoad the budget ratio
     * @param minDelay the smallest delay
     * @param maxDelay the largest delay
     * @param timeout the call deadline, or null
     * @param idempotent whether calls that do not say may be hedged
     * @param slowCallThreshold the slow-call log's threshold, or null
     * @param savingsWindow how long a call counts in the savings
     * @param loserSampling the share of beaten primaries left running to completion
     */
    public record ConfigDescriptor(
            int maxAttempts,
            String delay,
            double maxExtraLoad,
            String minDelay,
            String maxDelay,
            String timeout,
            boolean idempotent,
            String slowCallThreshold,
            String savingsWindow,
            double loserSampling) {}

    /**
     * Recent per-attempt latency in milliseconds; null when the window is empty.
     *
     * @param count samples in the window
     * @param p50Ms median
     * @param p90Ms 90th percentile
     * @param p95Ms 95th percentile
     * @param p99Ms 99th percentile
     * @param p999Ms 99.9th percentile
     * @param maxMs largest sample
     */
    public record LatencyDescriptor(
            long count, Double p50Ms, Double p90Ms, Double p95Ms, Double p99Ms, Double p999Ms, Double maxMs) {}

    /**
     * The hedge budget now.
     *
     * @param ratio extra attempts per primary call; null if unlimited
     * @param remaining tokens available now (a hedge needs one); null if unlimited
     * @param primariesInWindow primary calls in the window
     * @param hedgesInWindow hedges granted in the window
     * @param totalGranted hedges granted since the budget was created
     * @param totalDenied hedges denied since the budget was created
     */
    public record BudgetDescriptor(
            Double ratio,
            Double remaining,
            long primariesInWindow,
            long hedgesInWindow,
            long totalGranted,
            long totalDenied) {}
}

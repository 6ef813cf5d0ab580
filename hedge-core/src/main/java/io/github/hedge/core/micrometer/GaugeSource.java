package io.github.hedge.core.micrometer;

import io.github.hedge.core.DelaySource;
import io.github.hedge.core.HedgeSavings;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.LatencySummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.TimeGauge;
import java.lang.ref.WeakReference;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * The gauges of a {@link HedgeMetrics}: the state object they read, held weakly, and value
 * functions that do not capture it; for an executor also its savings and its delay's source.
 * Immutable.
 */
final class GaugeSource<S> {
    /** Percentiles of {@link HedgeSavings} as time gauges, and whether each estimate is supported, tagged {@code percentile}. */
    private static final double[] SAVINGS_PERCENTILES = {0.5, 0.99, 0.999};

    final WeakReference<S> state;
    final ToLongFunction<? super S> delayNanos;
    final ToDoubleFunction<? super S> budgetRemaining;
    final ToLongFunction<? super S> inFlightCalls;

    GaugeSource(
            S state,
            ToLongFunction<? super S> delayNanos,
            ToDoubleFunction<? super S> budgetRemaining,
            ToLongFunction<? super S> inFlightCalls) {
        this.state = new WeakReference<>(state);
        this.delayNanos = delayNanos;
        this.budgetRemaining = budgetRemaining;
        this.inFlightCalls = inFlightCalls;
    }

    /**
     * Registers the gauges in the binding's registry, unless the state object is gone.
     *
     * @param savingsGauges whether an executor's savings are published too
     */
    void register(MeterBinding b, boolean savingsGauges) {
        S s = state.get();
        if (s == null) {
            return; // the executor is gone: nothing left to measure
        }
        if (delayNanos != null) {
            ToLongFunction<? super S> f = delayNanos;
            b.track(TimeGauge.builder(b.meterName("delay.current"), s, TimeUnit.NANOSECONDS, x -> {
                        long d = f.applyAsLong(x);
                        return d < 0 ? Double.NaN : d;
                    })
                    .description("delay before the first hedge of a call starting now; NaN when it would not be hedged")
                    .tags(b.commonTags)
                    .register(b.registry));
        }
        if (budgetRemaining != null) {
            ToDoubleFunction<? super S> f = budgetRemaining;
            b.track(Gauge.builder(b.meterName("budget.remaining"), s, f::applyAsDouble)
                    .description("hedge budget tokens available now")
                    .baseUnit("tokens")
                    .tags(b.commonTags)
                    .register(b.registry));
        }
        if (savingsGauges && s instanceof HedgedExecutor) {
            registerSavings(b, (HedgedExecutor) s);
        }
        if (s instanceof HedgedExecutor) {
            registerDelaySource(b, (HedgedExecutor) s);
        }
        if (inFlightCalls != null) {
            ToLongFunction<? super S> f = inFlightCalls;
            b.track(Gauge.builder(b.meterName("calls.in.flight"), s, x -> (double) f.applyAsLong(x))
                    .description("hedged calls started and not yet completed")
                    .tags(b.commonTags)
                    .register(b.registry));
        }
    }

    private static long savingsValue(LatencySummary s, int i) {
        long v = i == 0 ? s.p50Nanos() : i == 1 ? s.p99Nanos() : s.p999Nanos();
        return v;
    }

    private static void registerSavings(MeterBinding b, HedgedExecutor executor) {
        for (int i = 0; i < SAVINGS_PERCENTILES.length; i++) {
            int k = i;
            double p = SAVINGS_PERCENTILES[i];
            String tag = Double.toString(p); // 0.5, 0.99, 0.999
            b.track(TimeGauge.builder(b.meterName("latency.hedged"), executor, TimeUnit.NANOSECONDS, x -> {
                        long v = savingsValue(x.savings().hedged(), k);
                        return v < 0 ? Double.NaN : v;
                    })
                    .description("latency of successful calls over the savings window (HedgedExecutor.savings())")
                    .tags(b.commonTags)
                    .tag("percentile", tag)
                    .register(b.registry));
            b.track(TimeGauge.builder(b.meterName("latency.unhedged.estimated"), executor, TimeUnit.NANOSECONDS, x -> {
                        long v = savingsValue(x.savings().unhedgedEstimate(), k);
                        return v < 0 ? Double.NaN : v;
                    })
                    .description("estimated latency of the same calls without hedging (cancelled primaries as"
                            + " lower bounds, Kaplan-Meier); NaN where the data do not support it; see"
                            + " HedgedExecutor.savings()")
                    .tags(b.commonTags)
                    .tag("percentile", tag)
                    .register(b.registry));
            b.track(Gauge.builder(
                            b.meterName("latency.unhedged.supported"),
                            executor,
                            x -> x.savings().isEstimateSupported(p) ? 1 : 0)
                    .description("1 when the data support the unhedged estimate at this percentile (its"
                            + " approximate 95% interval within 10% of it), else 0; see HedgeSavings")
                    .tags(b.commonTags)
                    .tag("percentile", tag)
                    .register(b.registry));
        }
    }

    private static void registerDelaySource(MeterBinding b, HedgedExecutor executor) {
        for (DelaySource source : DelaySource.values()) {
            b.track(Gauge.builder(b.meterName("delay.source"), executor, x -> x.currentDelaySource() == source ? 1 : 0)
                    .description("1 for where hedge.delay.current comes from now (estimate, warm_up, fallback,"
                            + " policy, budget), else 0")
                    .tags(b.commonTags)
                    .tag("source", source.name().toLowerCase(java.util.Locale.ROOT))
                    .register(b.registry));
        }
    }
}

package io.github.hedge.core.micrometer;

import io.github.hedge.core.DelaySource;
import io.github.hedge.core.HedgeSavings;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.LatencySummary;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeEventListener;
import io.github.hedge.core.event.HedgeEvents;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.event.Subscription;
import io.github.hedge.core.internal.Checks;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * Micrometer meters for one {@link HedgedExecutor}, or for any source of {@link HedgeEvents} (an
 * adapter that hedges outside the executor and only publishes {@link CallCompleted}). Like
 * resilience4j's {@code TaggedCircuitBreakerMetrics}: {@link #bindTo(MeterRegistry)} registers the
 * meters and subscribes to the events; {@link #close()} unsubscribes and removes every meter it
 * registered from every registry it was bound to.
 *
 * <pre>{@code
 * HedgeMetrics metrics = HedgeMetrics.of(executor);
 * metrics.bindTo(registry);
 * ...
 * metrics.close(); // on shutdown of the executor
 * }</pre>
 *
 * <h2>Meters</h2>
 *
 * Names below use the default prefix {@code hedge}; {@link Builder#prefix(String)} replaces it.
 * Every meter carries the tag {@code name} (the executor's name) and the {@link
 * Builder#tags(Iterable) extra common tags}. Tags are low-cardinality by design: never a target
 * (host), never user data, and the call's {@code operation} label only when opted in with {@link
 * Builder#tagOperation(boolean)}.
 *
 * <table>
 *   <caption>meters</caption>
 *   <tr><th>name</th><th>type, unit</th><th>tags</th><th>source</th></tr>
 *   <tr><td>{@code hedge.calls}</td><td>counter, calls</td>
 *       <td>{@code outcome}: success|failure|deadline_exceeded|cancelled</td>
 *       <td>{@link CallCompleted}</td></tr>
 *   <tr><td>{@code hedge.attempts}</td><td>counter, attempts</td>
 *       <td>{@code outcome}: won|succeeded_late|failed|cancelled|left_running; {@code kind}: primary|hedge</td>
 *       <td>{@link CallCompleted#attempts()}</td></tr>
 *   <tr><td>{@code hedge.hedges.sent}</td><td>counter, hedges</td>
 *       <td>{@code reason}: delay_elapsed|previous_failed|budget_deferred</td><td>{@link HedgeSent}</td></tr>
 *   <tr><td>{@code hedge.hedges.won}</td><td>counter, hedges</td><td>-</td><td>{@link HedgeWon}</td></tr>
 *   <tr><td>{@code hedge.budget.denied}</td><td>counter, hedges</td><td>-</td>
 *       <td>{@link BudgetExhausted}</td></tr>
 *   <tr><td>{@code hedge.not.hedged}</td><td>counter, calls</td>
 *       <td>{@code reason}: non_idempotent|budget_exhausted|policy_declined|max_attempts|pushback|scheduler_rejected</td>
 *       <td>{@link NotHedged}</td></tr>
 *   <tr><td>{@code hedge.attempt.latency}</td><td>timer, seconds</td><td>{@code kind}</td>
 *       <td>each attempt's duration in {@link CallCompleted#attempts()}: winners, late successes,
 *       failures, and cancelled losers up to their cancellation</td></tr>
 *   <tr><td>{@code hedge.call.latency}</td><td>timer, seconds</td><td>{@code outcome}</td>
 *       <td>{@link CallCompleted#totalNanos()}</td></tr>
 *   <tr><td>{@code hedge.delay.current}</td><td>time gauge, seconds</td><td>-</td>
 *       <td>{@link HedgedExecutor#currentDelayNanos()}; NaN while the policy would not hedge</td></tr>
 *   <tr><td>{@code hedge.delay.source}</td><td>gauge, 1 or 0</td><td>{@code source}:
 *       estimate|warm_up|fallback|policy</td><td>1 for {@link HedgedExecutor#currentDelaySource()}</td></tr>
 *   <tr><td>{@code hedge.budget.remaining}</td><td>gauge, tokens</td><td>-</td>
 *       <td>{@code executor.budget().snapshot().remaining()}</td></tr>
 *   <tr><td>{@code hedge.calls.in.flight}</td><td>gauge, calls</td><td>-</td>
 *       <td>{@code executor.stats().inFlightCalls()}</td></tr>
 *   <tr><td>{@code hedge.latency.hedged}</td><td>time gauge, seconds</td><td>{@code percentile}:
 *       0.5|0.99|0.999</td><td>{@code executor.savings().hedged()}: what callers saw</td></tr>
 *   <tr><td>{@code hedge.latency.unhedged.estimated}</td><td>time gauge, seconds</td>
 *       <td>{@code percentile}: 0.5|0.99|0.999</td><td>{@code executor.savings().unhedgedEstimate()}:
 *       what the same calls would have taken without hedging ({@link HedgeSavings}); NaN where the
 *       data do not support the estimate</td></tr>
 *   <tr><td>{@code hedge.latency.unhedged.supported}</td><td>gauge, 1 or 0</td>
 *       <td>{@code percentile}: 0.5|0.99|0.999</td><td>1 when the data support that percentile's
 *       estimate ({@link HedgeSavings#isEstimateSupported(double)}: its approximate 95% interval lies
 *       within 10% of it), 0 when it is not reported</td></tr>
 * </table>
 *
 * <p>The gauges exist only when bound to an executor ({@link #of(HedgedExecutor)}) or when
 * {@link Builder#gauges} supplied their sources (the savings gauges only for an executor, unless {@link Builder#savingsGauges} is off). The counters from {@link CallCompleted} are
 * enough on their own: {@code hedge.attempts{kind=hedge}} counts hedges sent and {@code
 * hedge.attempts{kind=hedge,outcome=won}} hedges won, also for adapters that publish nothing but
 * {@link CallCompleted}; {@code hedge.hedges.sent} and {@code hedge.hedges.won} count the
 * dedicated events, which only their publishers emit (the executor does).
 *
 * <p>With {@link Builder#tagOperation(boolean)} the meters fed by {@link CallCompleted} also carry
 * {@code operation} ({@code none} when the call had no label); after {@value #MAX_OPERATIONS}
 * distinct labels per registry, further ones are counted as {@code other}, so a misused label
 * cannot blow up the registry.
 *
 * <p>Gauges hold the executor only weakly (it is the gauge's state object, and neither this
 * object nor the value functions hold it strongly): metrics never keep an executor alive.
 *
 * <p>Thread-safe. Events are recorded on the publishing thread without locks (meters are
 * pre-registered); {@code bindTo} and {@code close} may be called from any thread. Bind one
 * instance per executor and registry: two instances with the same name and tags in one registry
 * share meters, so both would count and closing one would remove the other's meters.
 */
public final class HedgeMetrics implements MeterBinder, AutoCloseable {
    /**
     * The event types the meters read; {@code AttemptStarted} is not one (attempts are counted from
     * {@code CallCompleted}'s trace), so the executor never builds it for metrics.
     */
    private static final Set<Class<? extends HedgeEvent>> EVENT_TYPES =
            Set.of(CallCompleted.class, HedgeSent.class, HedgeWon.class, BudgetExhausted.class, NotHedged.class);

    /** The default metric name prefix. */
    public static final String DEFAULT_PREFIX = "hedge";

    /** Distinct {@code operation} tag values per registry before further ones become {@code other}. */
    public static final int MAX_OPERATIONS = 100;

    static final String TAG_NAME = "name";
    static final String TAG_OUTCOME = "outcome";
    static final String TAG_KIND = "kind";
    static final String TAG_REASON = "reason";
    static final String TAG_OPERATION = "operation";
    static final String NO_OPERATION = "none";
    static final String OTHER_OPERATION = "other";

    private static final Set<String> RESERVED_TAGS = Set.of(TAG_NAME, TAG_OUTCOME, TAG_KIND, TAG_REASON, TAG_OPERATION);
    private static final String[] KINDS = {"primary", "hedge"};

    private final String name;
    private final HedgeEvents events;
    private final String prefix;
    private final Tags commonTags;
    private final boolean percentileHistogram;
    private final boolean tagOperation;
    private final GaugeSource<?> gauges;
    private final boolean savingsGauges;

    private final CopyOnWriteArrayList<Binding> bindings = new CopyOnWriteArrayList<>();
    private Subscription subscription; // guarded by this
    private boolean closed; // guarded by this

    private HedgeMetrics(Builder b) {
        this.name = b.name;
        this.events = b.events;
        this.prefix = b.prefix;
        this.commonTags = b.tags.and(TAG_NAME, b.name);
        this.percentileHistogram = b.percentileHistogram;
        this.tagOperation = b.tagOperation;
        this.gauges = b.gauges;
        this.savingsGauges = b.savingsGauges;
    }

    /**
     * Meters for an executor, with the defaults: its events, and gauges of its current delay,
     * budget and calls in flight.
     *
     * @param executor the executor; held only weakly by the gauges
     * @return an unbound binder; call {@link #bindTo(MeterRegistry)}
     */
    public static HedgeMetrics of(HedgedExecutor executor) {
        return builder(executor).build();
    }

    /**
     * Meters from events alone, for adapters that publish {@link CallCompleted} for calls the
     * executor did not run: no gauges.
     *
     * @param name the value of the {@code name} tag; low-cardinality
     * @param events the event stream
     * @return an unbound binder
     */
    public static HedgeMetrics of(String name, HedgeEvents events) {
        return builder(name, events).build();
    }

    /**
     * @param executor the executor
     * @return a builder for an executor's meters, gauges included
     */
    public static Builder builder(HedgedExecutor executor) {
        Checks.notNull("executor", executor);
        return new Builder(executor.name(), executor.events())
                .gauges(
                        executor,
                        HedgedExecutor::currentDelayNanos,
                        e -> e.budget().snapshot().remaining(),
                        e -> e.stats().inFlightCalls());
    }

    /**
     * @param name the value of the {@code name} tag; low-cardinality
     * @param events the event stream
     * @return a builder for meters fed by events alone
     */
    public static Builder builder(String name, HedgeEvents events) {
        return new Builder(Checks.name("name", name), Checks.notNull("events", events));
    }

    /** @return the value of the {@code name} tag */
    public String name() {
        return name;
    }

    /**
     * Registers the meters in {@code registry} and, on the first call, subscribes to the events.
     * Binding to several registries is allowed; binding twice to the same one does nothing.
     *
     * @param registry the registry
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry must not be null");
        if (closed) {
            throw new IllegalStateException("HedgeMetrics for '" + name + "' is closed");
        }
        for (Binding b : bindings) {
            if (b.registry == registry) {
                return;
            }
        }
        Binding binding = new Binding(registry);
        if (gauges != null) {
            gauges.register(this, binding);
        }
        bindings.add(binding);
        if (subscription == null) {
            subscription = events.subscribe(new HedgeEventListener() {
                @Override
                public Set<Class<? extends HedgeEvent>> eventTypes() {
                    return EVENT_TYPES;
                }

                @Override
                public void onEvent(HedgeEvent event) {
                    HedgeMetrics.this.onEvent(event);
                }
            });
        }
    }

    /**
     * Unsubscribes from the events and removes every meter this binder registered from every
     * registry it was bound to. Idempotent; the binder cannot be bound again afterwards.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (subscription != null) {
            subscription.close();
            subscription = null;
        }
        for (Binding b : bindings) {
            b.removeAll();
        }
        bindings.clear();
    }

    private void onEvent(HedgeEvent event) {
        for (Binding b : bindings) {
            b.record(event);
        }
    }

    private String meterName(String suffix) {
        return prefix + "." + suffix;
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    /** The meters of one registry. */
    private final class Binding {
        final MeterRegistry registry;
        private final List<Meter> meters = new ArrayList<>(); // guarded by this
        private boolean removed; // guarded by this

        final Counter[] hedgesSent;
        final Counter hedgesWon;
        final Counter budgetDenied;
        final Counter[] notHedged;
        final CallMeters untagged;
        final ConcurrentHashMap<String, CallMeters> byOperation;

        Binding(MeterRegistry registry) {
            this.registry = registry;
            HedgeSent.Reason[] sentReasons = HedgeSent.Reason.values();
            hedgesSent = new Counter[sentReasons.length];
            for (HedgeSent.Reason r : sentReasons) {
                hedgesSent[r.ordinal()] = counter(
                        "hedges.sent",
                        "hedges sent: extra attempts beyond the primary",
                        "hedges",
                        Tags.of(TAG_REASON, lower(r)));
            }
            hedgesWon = counter("hedges.won", "calls whose answer came from a hedge", "hedges", Tags.empty());
            budgetDenied = counter(
                    "budget.denied",
                    "hedges refused for good by the hedge budget (a hedge that waited and got a token is not one)",
                    "hedges",
                    Tags.empty());
            NotHedged.Reason[] notReasons = NotHedged.Reason.values();
            notHedged = new Counter[notReasons.length];
            for (NotHedged.Reason r : notReasons) {
                notHedged[r.ordinal()] = counter(
                        "not.hedged",
                        "calls, or further attempts of them, deliberately not hedged",
                        "calls",
                        Tags.of(TAG_REASON, lower(r)));
            }
            if (tagOperation) {
                untagged = null;
                byOperation = new ConcurrentHashMap<>();
            } else {
                untagged = new CallMeters(this, Tags.empty());
                byOperation = null;
            }
        }

        Counter counter(String suffix, String description, String unit, Tags tags) {
            return track(Counter.builder(meterName(suffix))
                    .description(description)
                    .baseUnit(unit)
                    .tags(commonTags)
                    .tags(tags)
                    .register(registry));
        }

        Timer timer(String suffix, String description, Tags tags, boolean histogram) {
            return track(Timer.builder(meterName(suffix))
                    .description(description)
                    .tags(commonTags)
                    .tags(tags)
                    .publishPercentileHistogram(histogram)
                    .register(registry));
        }

        /** Remembers a meter for removal; removes it at once if the binding was already closed. */
        synchronized <M extends Meter> M track(M meter) {
            if (removed) {
                registry.remove(meter);
            } else {
                meters.add(meter);
            }
            return meter;
        }

        synchronized void removeAll() {
            removed = true;
            for (Meter m : meters) {
                registry.remove(m);
            }
            meters.clear();
        }

        void record(HedgeEvent event) {
            if (event instanceof CallCompleted c) {
                callMeters(c.operation()).record(c);
            } else if (event instanceof HedgeSent s) {
                hedgesSent[s.reason().ordinal()].increment();
            } else if (event instanceof HedgeWon) {
                hedgesWon.increment();
            } else if (event instanceof BudgetExhausted) {
                budgetDenied.increment();
            } else if (event instanceof NotHedged n) {
                notHedged[n.reason().ordinal()].increment();
            }
            // AttemptStarted: counted from CallCompleted's trace, which adapters publish too
        }

        private CallMeters callMeters(String operation) {
            if (untagged != null) {
                return untagged;
            }
            String op = operation == null ? NO_OPERATION : operation;
            CallMeters m = byOperation.get(op);
            if (m != null) {
                return m;
            }
            // a new label: decided under the binding's monitor, so threads bringing new labels at
            // once cannot all pass the size check: at most MAX_OPERATIONS labels, plus "other"
            synchronized (this) {
                m = byOperation.get(op);
                if (m != null) {
                    return m;
                }
                if (byOperation.size() >= MAX_OPERATIONS) {
                    op = OTHER_OPERATION;
                    m = byOperation.get(op);
                    if (m != null) {
                        return m;
                    }
                }
                m = new CallMeters(this, Tags.of(TAG_OPERATION, op));
                byOperation.put(op, m);
                return m;
            }
        }
    }

    /** The meters fed by {@link CallCompleted}, for one registry and (optionally) one operation. */
    private final class CallMeters {
        final Counter[] calls;
        final Counter[][] attempts; // [AttemptOutcome][kind]
        final Timer[] attemptLatency; // [kind]
        final Timer[] callLatency; // [CallOutcome]

        CallMeters(Binding b, Tags tags) {
            CallCompleted.CallOutcome[] callOutcomes = CallCompleted.CallOutcome.values();
            calls = new Counter[callOutcomes.length];
            callLatency = new Timer[callOutcomes.length];
            for (CallCompleted.CallOutcome o : callOutcomes) {
                Tags t = tags.and(TAG_OUTCOME, lower(o));
                calls[o.ordinal()] = b.counter("calls", "hedged calls completed", "calls", t);
                callLatency[o.ordinal()] =
                        b.timer("call.latency", "total time of hedged calls, all attempts included", t, false);
            }
            AttemptRecord.AttemptOutcome[] attemptOutcomes = AttemptRecord.AttemptOutcome.values();
            attempts = new Counter[attemptOutcomes.length][KINDS.length];
            for (AttemptRecord.AttemptOutcome o : attemptOutcomes) {
                for (int k = 0; k < KINDS.length; k++) {
                    attempts[o.ordinal()][k] = b.counter(
                            "attempts",
                            "attempts of completed hedged calls",
                            "attempts",
                            tags.and(TAG_OUTCOME, lower(o)).and(TAG_KIND, KINDS[k]));
                }
            }
            attemptLatency = new Timer[KINDS.length];
            for (int k = 0; k < KINDS.length; k++) {
                attemptLatency[k] = b.timer(
                        "attempt.latency",
                        "duration of each attempt until it completed or was cancelled",
                        tags.and(TAG_KIND, KINDS[k]),
                        percentileHistogram);
            }
        }

        void record(CallCompleted c) {
            int o = c.outcome().ordinal();
            calls[o].increment();
            if (c.totalNanos() >= 0) {
                callLatency[o].record(c.totalNanos(), TimeUnit.NANOSECONDS);
            }
            for (AttemptRecord a : c.attempts()) {
                int kind = a.attemptNumber() > 1 ? 1 : 0;
                attempts[a.outcome().ordinal()][kind].increment();
                if (a.durationNanos() >= 0) {
                    attemptLatency[kind].record(a.durationNanos(), TimeUnit.NANOSECONDS);
                }
            }
        }
    }

    /** Percentiles of {@link HedgeSavings} as time gauges, and whether each estimate is supported, tagged {@code percentile}. */
    private static final double[] SAVINGS_PERCENTILES = {0.5, 0.99, 0.999};

    private static long savingsValue(LatencySummary s, int i) {
        long v = i == 0 ? s.p50Nanos() : i == 1 ? s.p99Nanos() : s.p999Nanos();
        return v;
    }

    static void registerSavings(HedgeMetrics outer, HedgeMetrics.Binding b, HedgedExecutor executor) {
        for (int i = 0; i < SAVINGS_PERCENTILES.length; i++) {
            int k = i;
            double p = SAVINGS_PERCENTILES[i];
            String tag = Double.toString(p); // 0.5, 0.99, 0.999
            b.track(TimeGauge.builder(outer.meterName("latency.hedged"), executor, TimeUnit.NANOSECONDS, x -> {
                        long v = savingsValue(x.savings().hedged(), k);
                        return v < 0 ? Double.NaN : v;
                    })
                    .description("latency of successful calls over the savings window (HedgedExecutor.savings())")
                    .tags(outer.commonTags)
                    .tag("percentile", tag)
                    .register(b.registry));
            b.track(TimeGauge.builder(
                            outer.meterName("latency.unhedged.estimated"), executor, TimeUnit.NANOSECONDS, x -> {
                                long v = savingsValue(x.savings().unhedgedEstimate(), k);
                                return v < 0 ? Double.NaN : v;
                            })
                    .description("estimated latency of the same calls without hedging (cancelled primaries as"
                            + " lower bounds, Kaplan-Meier); NaN where the data do not support it; see"
                            + " HedgedExecutor.savings()")
                    .tags(outer.commonTags)
                    .tag("percentile", tag)
                    .register(b.registry));
            b.track(Gauge.builder(
                            outer.meterName("latency.unhedged.supported"),
                            executor,
                            x -> x.savings().isEstimateSupported(p) ? 1 : 0)
                    .description("1 when the data support the unhedged estimate at this percentile (its"
                            + " approximate 95% interval within 10% of it), else 0; see HedgeSavings")
                    .tags(outer.commonTags)
                    .tag("percentile", tag)
                    .register(b.registry));
        }
    }

    static void registerDelaySource(HedgeMetrics outer, HedgeMetrics.Binding b, HedgedExecutor executor) {
        for (DelaySource source : DelaySource.values()) {
            b.track(Gauge.builder(
                            outer.meterName("delay.source"), executor, x -> x.currentDelaySource() == source ? 1 : 0)
                    .description("1 for where hedge.delay.current comes from now (estimate, warm_up, fallback,"
                            + " policy), else 0")
                    .tags(outer.commonTags)
                    .tag("source", source.name().toLowerCase(java.util.Locale.ROOT))
                    .register(b.registry));
        }
    }

    /** The state object of the gauges, held weakly, and value functions that do not capture it. */
    private static final class GaugeSource<S> {
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

        void register(HedgeMetrics outer, HedgeMetrics.Binding b) {
            S s = state.get();
            if (s == null) {
                return; // the executor is gone: nothing left to measure
            }
            if (delayNanos != null) {
                ToLongFunction<? super S> f = delayNanos;
                b.track(TimeGauge.builder(outer.meterName("delay.current"), s, TimeUnit.NANOSECONDS, x -> {
                            long d = f.applyAsLong(x);
                            return d < 0 ? Double.NaN : d;
                        })
                        .description(
                                "delay before the first hedge of a call starting now; NaN when it would not be hedged")
                        .tags(outer.commonTags)
                        .register(b.registry));
            }
            if (budgetRemaining != null) {
                ToDoubleFunction<? super S> f = budgetRemaining;
                b.track(Gauge.builder(outer.meterName("budget.remaining"), s, f::applyAsDouble)
                        .description("hedge budget tokens available now")
                        .baseUnit("tokens")
                        .tags(outer.commonTags)
                        .register(b.registry));
            }
            if (outer.savingsGauges && s instanceof HedgedExecutor) {
                registerSavings(outer, b, (HedgedExecutor) s);
            }
            if (s instanceof HedgedExecutor) {
                registerDelaySource(outer, b, (HedgedExecutor) s);
            }
            if (inFlightCalls != null) {
                ToLongFunction<? super S> f = inFlightCalls;
                b.track(Gauge.builder(outer.meterName("calls.in.flight"), s, x -> (double) f.applyAsLong(x))
                        .description("hedged calls started and not yet completed")
                        .tags(outer.commonTags)
                        .register(b.registry));
            }
        }
    }

    /**
     * Options of a {@link HedgeMetrics}. Not thread-safe; build once.
     *
     * <p>Defaults: prefix {@value HedgeMetrics#DEFAULT_PREFIX}, no extra tags, no percentile
     * histogram, no {@code operation} tag.
     */
    public static final class Builder {
        private final String name;
        private final HedgeEvents events;
        private String prefix = DEFAULT_PREFIX;
        private Tags tags = Tags.empty();
        private boolean percentileHistogram;
        private boolean tagOperation;
        private GaugeSource<?> gauges;
        private boolean savingsGauges = true;

        private Builder(String name, HedgeEvents events) {
            this.name = name;
            this.events = events;
        }

        /**
         * @param prefix the first part of every meter name, {@code "hedge"} by default
         * @return this builder
         */
        public Builder prefix(String prefix) {
            String p = Checks.name("prefix", prefix);
            if (p.startsWith(".") || p.endsWith(".") || p.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException(
                        "prefix must be a dotted name without spaces or a leading or trailing dot, was \"" + p + "\"");
            }
            this.prefix = p;
            return this;
        }

        /**
         * @param tags extra tags on every meter (an application or region, say); keys {@code name,
         *     outcome, kind, reason, operation} are reserved
         * @return this builder
         */
        public Builder tags(Iterable<Tag> tags) {
            Checks.notNull("tags", tags);
            for (Tag t : tags) {
                if (RESERVED_TAGS.contains(t.getKey())) {
                    throw new IllegalArgumentException(
                            "tags must not use a reserved key (name, outcome, kind, reason, operation), was "
                                    + t.getKey());
                }
            }
            this.tags = this.tags.and(tags);
            return this;
        }

        /**
         * @param keyValues extra tags as key, value, key, value...
         * @return this builder
         */
        public Builder tags(String... keyValues) {
            return tags(Tags.of(keyValues));
        }

        /**
         * @param enabled whether {@code hedge.attempt.latency} publishes a percentile histogram
         *     (for server-side percentiles, e.g. Prometheus {@code histogram_quantile}); off by
         *     default
         * @return this builder
         */
        public Builder percentileHistogram(boolean enabled) {
            this.percentileHistogram = enabled;
            return this;
        }

        /**
         * @param enabled whether to publish {@link HedgedExecutor#savings()} as {@code
         *     hedge.latency.hedged} and {@code hedge.latency.unhedged.estimated} time gauges and the
         *     {@code hedge.latency.unhedged.supported} gauge, tagged {@code percentile} (0.5, 0.99,
         *     0.999); only for a binder built from an executor; on by default
         * @return this builder
         */
        public Builder savingsGauges(boolean enabled) {
            this.savingsGauges = enabled;
            return this;
        }

        /**
         * @param enabled whether meters fed by {@link CallCompleted} carry the call's {@code
         *     operation} label (capped at {@value HedgeMetrics#MAX_OPERATIONS} values per
         *     registry); off by default
         * @return this builder
         */
        public Builder tagOperation(boolean enabled) {
            this.tagOperation = enabled;
            return this;
        }

        /**
         * Gauges read from a state object, for sources other than a {@link HedgedExecutor} (which
         * {@link HedgeMetrics#builder(HedgedExecutor)} sets up itself). The state is held weakly; the
         * functions must not capture it. A {@code null} function skips its gauge.
         *
         * @param state the object the gauges read
         * @param currentDelayNanos the delay before a first hedge now, in nanoseconds, or negative
         *     when no hedge would be sent ({@code hedge.delay.current})
         * @param budgetRemaining budget tokens available now ({@code hedge.budget.remaining})
         * @param inFlightCalls calls in flight ({@code hedge.calls.in.flight})
         * @param <S> the state type
         * @return this builder
         */
        public <S> Builder gauges(
                S state,
                ToLongFunction<? super S> currentDelayNanos,
                ToDoubleFunction<? super S> budgetRemaining,
                ToLongFunction<? super S> inFlightCalls) {
            Checks.notNull("state", state);
            this.gauges = new GaugeSource<>(state, currentDelayNanos, budgetRemaining, inFlightCalls);
            return this;
        }

        /** @return the binder, not yet bound to any registry */
        public HedgeMetrics build() {
            return new HedgeMetrics(this);
        }
    }
}

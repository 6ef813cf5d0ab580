package io.github.hedge.core.micrometer;

import io.github.hedge.core.HedgeSavings;
import io.github.hedge.core.HedgedExecutor;
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
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
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
 *       <td>{@code reason}: non_idempotent|budget_exhausted|policy_declined|max_attempts|pushback|request_too_large|scheduler_rejected|no_untried_target|client_closing</td>
 *       <td>{@link NotHedged}</td></tr>
 *   <tr><td>{@code hedge.attempt.latency}</td><td>timer, seconds</td><td>{@code kind}</td>
 *       <td>each attempt's duration in {@link CallCompleted#attempts()}: winners, late successes,
 *       failures, and cancelled losers up to their cancellation</td></tr>
 *   <tr><td>{@code hedge.call.latency}</td><td>timer, seconds</td><td>{@code outcome}</td>
 *       <td>{@link CallCompleted#totalNanos()}</td></tr>
 *   <tr><td>{@code hedge.delay.current}</td><td>time gauge, seconds</td><td>-</td>
 *       <td>{@link HedgedExecutor#currentDelayNanos()}; NaN while the policy would not hedge</td></tr>
 *   <tr><td>{@code hedge.delay.source}</td><td>gauge, 1 or 0</td><td>{@code source}:
 *       estimate|warm_up|fallback|policy|budget</td><td>1 for {@link HedgedExecutor#currentDelaySource()}</td></tr>
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
    public static final int MAX_OPERATIONS = MeterTags.MAX_OPERATIONS;

    private final String name;
    private final HedgeEvents events;
    private final String prefix;
    private final Tags commonTags;
    private final boolean percentileHistogram;
    private final boolean tagOperation;
    private final GaugeSource<?> gauges;
    private final boolean savingsGauges;

    private final CopyOnWriteArrayList<MeterBinding> bindings = new CopyOnWriteArrayList<>();
    private Subscription subscription; // guarded by this
    private boolean closed; // guarded by this

    private HedgeMetrics(Builder b) {
        this.name = b.name;
        this.events = b.events;
        this.prefix = b.prefix;
        this.commonTags = b.tags.and(MeterTags.NAME, b.name);
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
        for (MeterBinding b : bindings) {
            if (b.registry == registry) {
                return;
            }
        }
        MeterBinding binding = new MeterBinding(registry, prefix, commonTags, percentileHistogram, tagOperation);
        if (gauges != null) {
            gauges.register(binding, savingsGauges);
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
        for (MeterBinding b : bindings) {
            b.removeAll();
        }
        bindings.clear();
    }

    private void onEvent(HedgeEvent event) {
        for (MeterBinding b : bindings) {
            b.record(event);
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
                if (MeterTags.RESERVED.contains(t.getKey())) {
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

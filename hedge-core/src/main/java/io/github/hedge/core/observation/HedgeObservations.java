package io.github.hedge.core.observation;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeEventListener;
import io.github.hedge.core.event.HedgeEvents;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.spi.CallDecorator;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Micrometer Observation for hedged calls: an observation {@value #CALL_NAME} per call, and one
 * {@value #ATTEMPT_NAME} per attempt as its child. Each attempt's function runs inside its
 * observation's scope, so client instrumentation beneath it (gRPC, the Cassandra driver, an HTTP
 * client) nests under the attempt; a blocking attempt's callable runs in that scope on the attempt
 * thread. The call's observation takes the caller's current observation as its parent.
 *
 * <pre>{@code
 * HedgeConfig config = HedgeConfig.builder()
 *         .maxExtraLoad(0.05)
 *         .callDecorator(HedgeObservations.of(observationRegistry))
 *         .build();
 * }</pre>
 *
 * <p>Both observations stop when the call ends, with the outcomes the call's {@link CallCompleted}
 * trace records: the winner ({@code hedge.outcome=won}), losers cancelled ({@code lost-cancelled}),
 * failures, a beaten primary left running for the savings sample ({@code left-running}; its
 * observation ends with the call, its work goes on), and hedges the call ended before they could
 * start ({@code not-started}). Key values are in {@link DefaultHedgeCallObservationConvention} and
 * {@link DefaultHedgeAttemptObservationConvention}; they hold names, numbers and exception class
 * names only, never arguments, results or messages. The target address is a high-cardinality key
 * value, added only with {@link Builder#includeTargets(boolean)}. Errors are not attached with
 * {@code Observation.error}, since an exception's message may carry user data.
 *
 * <p>With a registry that is a no-op (no handler), calls are not decorated at all. Thread-safe; one
 * instance may serve any number of executors. It listens to each executor's {@link HedgeSent} and
 * {@link CallCompleted} events from its first call on.
 */
public final class HedgeObservations implements CallDecorator {
    /** The name of a call's observation. */
    public static final String CALL_NAME = "hedge.call";

    /** The name of an attempt's observation. */
    public static final String ATTEMPT_NAME = "hedge.attempt";

    private final ObservationRegistry registry;
    private final HedgeCallObservationConvention callConvention;
    private final HedgeAttemptObservationConvention attemptConvention;
    private final boolean includeTargets;
    /** One tracker per executor event stream; weak, so a dropped executor is not held. */
    private final Map<HedgeEvents, Tracker> trackers = Collections.synchronizedMap(new WeakHashMap<>());

    private HedgeObservations(Builder b) {
        this.registry = b.registry;
        this.callConvention = b.callConvention;
        this.attemptConvention = b.attemptConvention;
        this.includeTargets = b.includeTargets;
    }

    /**
     * @param registry where observations go
     * @return observations with the default conventions and no target addresses
     */
    public static HedgeObservations of(ObservationRegistry registry) {
        return builder(registry).build();
    }

    /**
     * @param registry where observations go
     * @return a builder
     */
    public static Builder builder(ObservationRegistry registry) {
        return new Builder(registry);
    }

    /** @return whether attempts carry the target address ({@link Builder#includeTargets(boolean)}) */
    public boolean includesTargets() {
        return includeTargets;
    }

    /** @return the registry observations go to */
    public ObservationRegistry registry() {
        return registry;
    }

    @Override
    public <T> AttemptFunction<T> decorate(
            CallDecorator.Executor executor, CallOptions options, AttemptFunction<T> attempt) {
        if (registry.isNoop()) {
            return attempt;
        }
        HedgeCallObservationContext context = new HedgeCallObservationContext(executor.name(), options.operation());
        Observation call = Observation.createNotStarted(
                        callConvention, DefaultHedgeCallObservationConvention.INSTANCE, () -> context, registry)
                .parentObservation(registry.getCurrentObservation());
        if (call.isNoop()) {
            return attempt; // an ObservationPredicate turned it down
        }
        // started with the primary, on this thread: a call whose primary never starts (its
        // constructor threw) leaves nothing open
        Tracker tracker = tracker(executor.events());
        CallState state = new CallState(tracker, call, context, executor.maxAttempts());
        return ctx -> state.startAttempt(ctx, attempt);
    }

    @Override
    public Runnable decorateBlockingTask(Runnable task) {
        Observation current = registry.getCurrentObservation();
        if (current == null) {
            return task;
        }
        return () -> {
            try (Observation.Scope ignored = current.openScope()) {
                task.run();
            }
        };
    }

    private Tracker tracker(HedgeEvents events) {
        Tracker t = trackers.get(events);
        if (t != null) {
            return t;
        }
        synchronized (trackers) {
            t = trackers.get(events);
            if (t == null) {
                t = new Tracker();
                events.subscribe(t);
                trackers.put(events, t);
            }
            return t;
        }
    }

    /** @return calls of which the observations are open now, over every executor; for tests */
    int openCalls() {
        synchronized (trackers) {
            return trackers.values().stream().mapToInt(t -> t.calls.size()).sum();
        }
    }

    /** Follows one executor's calls by id: the reason of each hedge, then the call's end. */
    private static final class Tracker implements HedgeEventListener {
        private static final Set<Class<? extends HedgeEvent>> TYPES = Set.of(HedgeSent.class, CallCompleted.class);

        final Map<Long, CallState> calls = new ConcurrentHashMap<>();

        @Override
        public Set<Class<? extends HedgeEvent>> eventTypes() {
            return TYPES;
        }

        @Override
        public void onEvent(HedgeEvent event) {
            if (event instanceof HedgeSent sent) {
                CallState s = calls.get(sent.callId());
                if (s != null) {
                    s.reason(sent.attemptNumber(), sent.reason());
                }
            } else if (event instanceof CallCompleted done) {
                CallState s = calls.remove(done.callId());
                if (s != null) {
                    s.end(done);
                }
            }
        }
    }

    /** One call's observations. Guarded by its own monitor. */
    private final class CallState {
        final Tracker tracker;
        final Observation call;
        final HedgeCallObservationContext context;
        final Observation[] attempts;
        final HedgeAttemptObservationContext[] contexts;
        final HedgeSent.Reason[] reasons;
        CallCompleted ended;

        CallState(Tracker tracker, Observation call, HedgeCallObservationContext context, int maxAttempts) {
            this.tracker = tracker;
            this.call = call;
            this.context = context;
            this.attempts = new Observation[maxAttempts];
            this.contexts = new HedgeAttemptObservationContext[maxAttempts];
            this.reasons = new HedgeSent.Reason[maxAttempts];
        }

        synchronized void reason(int attemptNumber, HedgeSent.Reason reason) {
            if (attemptNumber <= reasons.length) {
                reasons[attemptNumber - 1] = reason;
            }
        }

        <T> CompletionStage<T> startAttempt(AttemptContext ctx, AttemptFunction<T> fn) throws Exception {
            int n = ctx.attemptNumber();
            if (n == 1) {
                call.start();
                tracker.calls.put(ctx.callId(), this); // before the primary starts: it may end inside
            }
            HedgeSent.Reason reason;
            synchronized (this) {
                if (ended != null || n > attempts.length) {
                    reason = null;
                } else {
                    reason = reasons[n - 1];
                }
            }
            HedgeAttemptObservationContext c =
                    new HedgeAttemptObservationContext(context.executorName(), context.operation(), n, reason, true);
            Observation attempt = Observation.createNotStarted(
                            attemptConvention, DefaultHedgeAttemptObservationConvention.INSTANCE, () -> c, registry)
                    .parentObservation(call);
            boolean late;
            synchronized (this) {
                late = ended != null || n > attempts.length;
                if (!late) {
                    // started inside the call's scope: a tracer takes the span current on this
                    // thread as the parent when it differs from the parent observation's (the
                    // caller's own span, on the primary's thread), so the call's span must be it
                    try (Observation.Scope parent = call.openScope()) {
                        attempt.start();
                    }
                    attempts[n - 1] = attempt;
                    contexts[n - 1] = c;
                }
            }
            if (late) {
                return fn.start(ctx); // the call ended while this attempt was being started: reported not-started
            }
            try (Observation.Scope ignored = attempt.openScope()) {
                return fn.start(ctx);
            }
        }

        void end(CallCompleted done) {
            Observation[] open;
            HedgeAttemptObservationContext[] ctxs;
            HedgeSent.Reason[] why;
            synchronized (this) {
                ended = done;
                open = attempts.clone();
                ctxs = contexts.clone();
                why = reasons.clone();
            }
            for (AttemptRecord r : done.attempts()) {
                int i = r.attemptNumber() - 1;
                if (i >= open.length) {
                    continue;
                }
                Observation o = open[i];
                HedgeAttemptObservationContext c = ctxs[i];
                if (o == null) {
                    c = new HedgeAttemptObservationContext(
                            context.executorName(), context.operation(), r.attemptNumber(), why[i], false);
                    HedgeAttemptObservationContext fc = c;
                    o = Observation.createNotStarted(
                                    attemptConvention,
                                    DefaultHedgeAttemptObservationConvention.INSTANCE,
                                    () -> fc,
                                    registry)
                            .parentObservation(call)
                            .start();
                }
                c.ended(r, done.outcome());
                if (includeTargets && r.target() != null) {
                    o.highCardinalityKeyValue("hedge.target", r.target());
                }
                o.stop();
            }
            context.ended(done);
            call.stop();
        }
    }

    /** Builds {@link HedgeObservations}. Not thread-safe; {@link #build()} copies. */
    public static final class Builder {
        private final ObservationRegistry registry;
        private HedgeCallObservationConvention callConvention;
        private HedgeAttemptObservationConvention attemptConvention;
        private boolean includeTargets;

        private Builder(ObservationRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry must not be null");
        }

        /**
         * @param convention replaces {@link DefaultHedgeCallObservationConvention}, or {@code null}
         *     for the default (a registered global convention still applies)
         * @return this
         */
        public Builder callConvention(HedgeCallObservationConvention convention) {
            this.callConvention = convention;
            return this;
        }

        /**
         * @param convention replaces {@link DefaultHedgeAttemptObservationConvention}, or {@code
         *     null} for the default
         * @return this
         */
        public Builder attemptConvention(HedgeAttemptObservationConvention convention) {
            this.attemptConvention = convention;
            return this;
        }

        /**
         * @param include whether attempts carry the high-cardinality key value {@code hedge.target}:
         *     the target the adapter reported (an address such as {@code 10.0.0.3:9042}); default
         *     {@code false}
         * @return this
         */
        public Builder includeTargets(boolean include) {
            this.includeTargets = include;
            return this;
        }

        /** @return the observations */
        public HedgeObservations build() {
            return new HedgeObservations(this);
        }
    }
}

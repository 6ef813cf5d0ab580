package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayContext;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.DelaySource;
import io.github.hedge.core.ErrorClassifier;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeSavings;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.event.HedgeEvents;
import io.github.hedge.core.spi.HedgeScheduler;
import io.github.hedge.core.spi.Ticker;
import io.github.resilience4j.core.ContextPropagator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state one {@code HedgedExecutor} shares between its calls: configuration resolved once,
 * counters, the event stream. Internal; thread-safe.
 */
public final class Engine {
    private static final Logger LOG = LoggerFactory.getLogger("io.github.hedge.core.HedgedExecutor");

    final String name;
    final HedgeConfig config;
    final int maxAttempts;
    final DelayPolicy delayPolicy;
    final ErrorClassifier classifier;
    final LatencyTracker tracker;
    /** Primaries' and calls' latency for {@link #savings()}. */
    final Savings savings;
    /** The share of beaten primaries left to finish, in [0, 1]. */
    final double loserSampling;
    /** The savings window, in ns: the longest a sampled loser may run. */
    final long savingsWindowNanos;
    /** Beaten primaries seen so far, for the deterministic sample. */
    private final AtomicLong beatenPrimaries = new AtomicLong();

    final HedgeBudget budget;
    /** Whether the budget reads the executor's own ticker, so the call's start time can be reused. */
    final boolean budgetSharesTicker;
    /**
     * Whether this executor built its budget itself: then only its own primaries deposit tokens,
     * and each deposit drains {@link #deferred}, so a deferred hedge's timer is only a backstop.
     */
    final boolean budgetOwned;
    /** Calls whose hedge waits for a budget token, oldest first. */
    final DeferredHedges deferred = new DeferredHedges(this);
    /**
     * Calls whose primary started before the executor knew any latency (the delay policy said
     * "warming up, no sample yet"): each answer asks the policy again for them, so the first calls
     * of a new executor are hedged once a delay exists instead of never. At most {@link
     * #MAX_AWAITING_DELAY}; a call leaves when it is armed or ends.
     */
    final ConcurrentLinkedQueue<HedgedCall<?>> awaitingDelay = new ConcurrentLinkedQueue<>();
    /** Calls that may wait for the first delay at once: the calls of the executor's first moments. */
    static final int MAX_AWAITING_DELAY = 1024;

    private final AtomicInteger awaitingDelayCount = new AtomicInteger();

    final HedgeScheduler scheduler;
    final Ticker ticker;
    final boolean idempotentByDefault;
    final long defaultDeadlineNanos;
    final List<ContextPropagator<?>> propagators;
    final HedgeEvents events = new HedgeEvents();
    /** Hedge timers: one scheduler task per executor, not one per call. */
    final TimerQueue timers;
    /** Call deadlines, queued the same way (deadlines are nearly constant too). */
    final TimerQueue deadlines;

    private final AtomicLong callIds = new AtomicLong();
    private final AtomicBoolean warnedNonIdempotent = new AtomicBoolean();

    final LongAdder calls = new LongAdder();
    /**
     * Calls that succeeded, each by its winning attempt: one count for the call's success and for
     * that attempt's end, so a won call costs one increment here instead of two.
     */
    final LongAdder wins = new LongAdder();

    final LongAdder failures = new LongAdder();
    final LongAdder deadlineExceeded = new LongAdder();
    final LongAdder cancelled = new LongAdder();
    final LongAdder hedgesSent = new LongAdder();
    final LongAdder hedgesWon = new LongAdder();
    final LongAdder budgetDenied = new LongAdder();
    final LongAdder notHedgedNonIdempotent = new LongAdder();
    /** Attempts that failed, lost or were cancelled; pending = attempts - attemptsEnded - wins. */
    final LongAdder attemptsEnded = new LongAdder();

    public Engine(String name, HedgeConfig config) {
        this.name = name;
        this.config = config;
        this.maxAttempts = config.maxAttempts();
        this.delayPolicy = config.delayPolicy();
        this.classifier = config.errorClassifier();
        this.ticker = config.ticker();
        this.scheduler = config.scheduler();
        this.timers = new TimerQueue(scheduler, ticker);
        this.deadlines = new TimerQueue(scheduler, ticker);
        this.tracker = config.latencyTracker().orElseGet(() -> LatencyTracker.builder()
                .ticker(ticker)
                // enough samples for the policy's percentile (p99.9 needs 300,000), kept up to an hour
                .sizedFor(delayPolicy)
                .build());
        this.budget = config.budget().orElseGet(() -> HedgeBudget.builder()
                .ratio(config.budgetRatio())
                .initialTokens(HedgeBudget.coldStartTokens(config.budgetRatio()))
                .ticker(ticker)
                .build());
        this.budgetSharesTicker = budget.ticker() == ticker;
        this.budgetOwned = config.budget().isEmpty();
        this.savings = new Savings(ticker, config.savingsWindow());
        this.loserSampling = config.loserSampling();
        this.savingsWindowNanos = Checks.positiveNanos("savingsWindow", config.savingsWindow());
        this.idempotentByDefault = config.idempotentByDefault();
        this.defaultDeadlineNanos = config.deadline().map(d -> d.toNanos()).orElse(0L);
        this.propagators = config.contextPropagators();
    }

    public String name() {
        return name;
    }

    /**
     * @return whether the primary just beaten by a hedge is left to finish: true for every
     *     {@code 1/loserSampling}-th one
     */
    boolean sampleBeatenPrimary() {
        double share = loserSampling;
        if (share <= 0) {
            return false;
        }
        long n = beatenPrimaries.getAndIncrement();
        return (long) ((n + 1) * share) > (long) (n * share);
    }

    public HedgeConfig config() {
        return config;
    }

    public HedgeEvents events() {
        return events;
    }

    public LatencyTracker tracker() {
        return tracker;
    }

    public HedgeBudget budget() {
        return budget;
    }

    public HedgeStats stats() {
        // ends are read before starts, so a call racing this read never shows as negative in flight
        long ok = wins.sum();
        long failed = failures.sum();
        long deadline = deadlineExceeded.sum();
        long cancel = cancelled.sum();
        long ended = attemptsEnded.sum() + ok;
        long callsStarted = calls.sum();
        long hedges = hedgesSent.sum();
        long attemptsStarted = callsStarted + hedges;
        return new HedgeStats(
                callsStarted,
                ok,
                failed,
                deadline,
                cancel,
                attemptsStarted,
                hedges,
                hedgesWon.sum(),
                budgetDenied.sum(),
                notHedgedNonIdempotent.sum(),
                Math.max(0, callsStarted - ok - failed - deadline - cancel),
                Math.max(0, attemptsStarted - ended),
                timers.size() + deadlines.size());
    }

    /** @return hedged latency beside the estimated unhedged latency, over the savings window */
    public HedgeSavings savings() {
        return savings.snapshot(stats());
    }

    /**
     * The policy's delay before the first hedge of a call starting now, with no target tried yet,
     * read with the budget's fill and ratio as a call reads them (a budget-aware policy's delay
     * depends on both); a policy that throws means no hedge.
     */
    public long currentDelayNanos() {
        return delayNanos(new CallStartContext());
    }

    /** Where {@link #currentDelayNanos()} comes from now; a policy that throws: POLICY. */
    public DelaySource delaySource() {
        try {
            return delayPolicy.source(new CallStartContext());
        } catch (Throwable e) { // NOPMD: user code; observability must not break
            logPolicyFailure(e);
            return DelaySource.POLICY;
        }
    }

    /**
     * @return whether a call the policy declined may wait for the first delay: the policy declined
     *     because it has no latency sample yet ({@link DelaySource#WARM_UP}), and the wait has room
     */
    boolean awaitFirstDelay(DelayContext ctx) {
        DelaySource source;
        try {
            source = delayPolicy.source(ctx);
        } catch (Throwable e) { // NOPMD: user code; the call goes on unhedged
            logPolicyFailure(e);
            return false;
        }
        if (source != DelaySource.WARM_UP || tracker.sampleCount() > 0) {
            return false;
        }
        if (awaitingDelayCount.incrementAndGet() > MAX_AWAITING_DELAY) {
            awaitingDelayCount.decrementAndGet();
            return false;
        }
        return true;
    }

    /** A call admitted by {@link #awaitFirstDelay} left the wait (or was never queued). */
    void leftAwaitingDelay() {
        awaitingDelayCount.decrementAndGet();
    }

    /**
     * An attempt answered: each call waiting for the first delay asks the policy again. The calls
     * waiting now, once each: a call the policy still declines queues again for the next answer.
     */
    void drainAwaitingDelay() {
        for (int n = awaitingDelayCount.get(); n > 0; n--) {
            HedgedCall<?> c = awaitingDelay.poll();
            if (c == null) {
                return;
            }
            leftAwaitingDelay();
            c.onFirstDelay();
        }
    }

    long delayNanos(DelayContext ctx) {
        try {
            // a custom policy's "very long" (Long.MAX_VALUE) must not overflow a due time
            return Math.min(delayPolicy.delayNanos(ctx), Checks.MAX_DURATION_NANOS);
        } catch (Throwable e) { // NOPMD: user code; whatever it throws, the call goes on unhedged
            logPolicyFailure(e);
            return DelayPolicy.NO_HEDGE;
        }
    }

    private final AtomicBoolean warnedPolicy = new AtomicBoolean();
    private final AtomicBoolean warnedHook = new AtomicBoolean();

    /**
     * User code the executor calls back (a cancel hook, a loser's {@code cancel()}, an error
     * classifier, a context propagator) threw: it is ignored, and the first such failure of this
     * executor is logged.
     */
    void logHookFailure(String what, Throwable t) {
        if (warnedHook.compareAndSet(false, true)) {
            try {
                LOG.warn(
                        "{} of hedged executor '{}' threw {}; ignored, the call goes on (logged once)",
                        what,
                        name,
                        t.getClass().getName(),
                        t);
            } catch (Throwable ignored) { // NOPMD: not even a failing logger may break a call
                // nothing else to do
            }
        }
    }

    private void logPolicyFailure(Throwable e) {
        if (warnedPolicy.compareAndSet(false, true)) {
            LOG.warn("delay policy of hedged executor '{}' threw; the call is not hedged (logged once)", name, e);
        }
    }

    private final AtomicBoolean warnedScheduler = new AtomicBoolean();

    void logSchedulerFailure(RuntimeException e) {
        if (warnedScheduler.compareAndSet(false, true)) {
            LOG.warn(
                    "scheduler of hedged executor '{}' refused a timer (closed?): calls run unhedged and calls with a "
                            + "deadline fail (logged once)",
                    name,
                    e);
        }
    }

    void noteNonIdempotent() {
        notHedgedNonIdempotent.increment();
        if (warnedNonIdempotent.compareAndSet(false, true)) {
            LOG.info(
                    "hedged executor '{}' ran a call not declared idempotent: it is never hedged. Declare idempotent "
                            + "calls with CallOptions.idempotent() or HedgeConfig.idempotentByDefault(true) (logged once)",
                    name);
        }
    }

    long nextCallId() {
        return callIds.incrementAndGet();
    }

    public <T> CompletableFuture<T> execute(CallOptions options, AttemptFunction<T> fn) {
        Boolean idem = options.declaredIdempotent();
        boolean idempotent = idem != null ? idem : idempotentByDefault;
        HedgedCall<T> call = new HedgedCall<>(this, fn, idempotent, options);
        call.start(deadlineNanos(options));
        return call;
    }

    /**
     * @return the deadline of a call with these options, in ns: its own, else the executor's
     *     default; 0 for none. Computed again where needed rather than kept in every call.
     */
    long deadlineNanos(CallOptions options) {
        Duration d = options.deadline();
        return d != null ? d.toNanos() : defaultDeadlineNanos;
    }

    /** What a call starting now shows the policy before its first hedge: no target tried yet. */
    private final class CallStartContext implements DelayContext {
        @Override
        public int attemptNumber() {
            return 2;
        }

        @Override
        public List<String> triedTargets() {
            return List.of();
        }

        @Override
        public LatencyTracker latency() {
            return tracker;
        }

        @Override
        public double budgetFill() {
            return budget.fill();
        }

        @Override
        public double budgetRatio() {
            return budget.ratio();
        }

        @Override
        public double budgetSupply(long calls) {
            return budget.supply(calls);
        }

        @Override
        public double budgetHedgesOver(long calls) {
            return budget.hedgesOver(calls);
        }
    }
}

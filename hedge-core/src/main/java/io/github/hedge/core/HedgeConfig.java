package io.github.hedge.core;

import io.github.hedge.core.internal.AttemptExecutors;
import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.spi.CallDecorator;
import io.github.hedge.core.spi.HedgeScheduler;
import io.github.hedge.core.spi.Schedulers;
import io.github.hedge.core.spi.Ticker;
import io.github.resilience4j.core.ContextPropagator;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * The immutable configuration of a {@link HedgedExecutor}. Every setting is validated when it is
 * set, with a message that names the setting, its valid range and the value given.
 *
 * <p>The defaults follow Finagle's single knob {@code maxExtraLoad = 0.05}: hedge after the p95 of
 * recent per-attempt latency, at most 5% extra attempts, two attempts per call, no hedging until
 * 100 samples have been seen. Calls are <b>non-idempotent unless declared otherwise</b>, per call
 * ({@link CallOptions#idempotent()}) or here ({@link Builder#idempotentByDefault(boolean)}): hedge
 * never guesses in favour of running a call twice.
 *
 * <p>A config that holds a {@link HedgeBudget} or {@link LatencyTracker} instance shares it with
 * every executor built from it; without one, each executor creates its own. Thread-safe.
 */
public final class HedgeConfig {
    /** The most attempts a call may be configured to run, primary included. */
    public static final int MAX_ATTEMPTS_LIMIT = 16;

    private static final HedgeConfig DEFAULTS = builder().build();

    private final int maxAttempts;
    private final DelayPolicy delayPolicy;
    private final double budgetRatio;
    private final HedgeBudget budget;
    private final LatencyTracker latencyTracker;
    private final boolean idempotentByDefault;
    private final Duration deadline;
    private final ErrorClassifier errorClassifier;
    private final Ticker ticker;
    private final HedgeScheduler scheduler;
    private final Executor attemptExecutor;
    private final List<ContextPropagator<?>> contextPropagators;
    private final Duration savingsWindow;
    private final double loserSampling;
    private final CallDecorator callDecorator;

    private HedgeConfig(Builder b) {
        this.maxAttempts = b.maxAttempts;
        this.delayPolicy = b.delayPolicy;
        this.budgetRatio = b.budgetRatio;
        this.budget = b.budget;
        this.latencyTracker = b.latencyTracker;
        this.idempotentByDefault = b.idempotentByDefault;
        this.deadline = b.deadline;
        this.errorClassifier = b.errorClassifier;
        this.ticker = b.ticker;
        this.scheduler = b.scheduler;
        this.attemptExecutor = b.attemptExecutor;
        this.contextPropagators = List.copyOf(b.contextPropagators);
        this.savingsWindow = b.savingsWindow;
        this.loserSampling = b.loserSampling;
        this.callDecorator = b.callDecorator;
    }

    /** @return the default configuration (see the class comment) */
    public static HedgeConfig ofDefaults() {
        return DEFAULTS;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * @param base a configuration to start from
     * @return a builder holding {@code base}'s settings
     */
    public static Builder from(HedgeConfig base) {
        return new Builder(base);
    }

    /** @return most attempts per call, primary included, in [1, 16] */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** @return the delay policy */
    public DelayPolicy delayPolicy() {
        return delayPolicy;
    }

    /** @return the ratio of the executor's own budget when no shared {@link #budget()} is set */
    public double budgetRatio() {
        return budgetRatio;
    }

    /** @return the shared budget instance, if one was set */
    public Optional<HedgeBudget> budget() {
        return Optional.ofNullable(budget);
    }

    /** @return the shared latency tracker, if one was set */
    public Optional<LatencyTracker> latencyTracker() {
        return Optional.ofNullable(latencyTracker);
    }

    /** @return whether calls that do not say are treated as idempotent */
    public boolean idempotentByDefault() {
        return idempotentByDefault;
    }

    /** @return the overall deadline of a call, if any */
    public Optional<Duration> deadline() {
        return Optional.ofNullable(deadline);
    }

    /** @return the error classifier */
    public ErrorClassifier errorClassifier() {
        return errorClassifier;
    }

    /** @return the time source */
    public Ticker ticker() {
        return ticker;
    }

    /** @return the scheduler of hedge timers and deadlines */
    public HedgeScheduler scheduler() {
        return scheduler != null ? scheduler : Schedulers.shared();
    }

    /** @return where the sync form runs attempts */
    public Executor attemptExecutor() {
        return attemptExecutor != null ? attemptExecutor : AttemptExecutors.defaultExecutor();
    }

    /** @return propagators that carry thread-local context (MDC, tracing) into attempts */
    public List<ContextPropagator<?>> contextPropagators() {
        return contextPropagators;
    }

    /**
     * @return what wraps each call's attempt function (tracing, say), or {@code null} for none
     */
    public CallDecorator callDecorator() {
        return callDecorator;
    }

    /** @return the window of {@link HedgedExecutor#savings()} */
    public Duration savingsWindow() {
        return savingsWindow;
    }

    /**
     * @return the share, in [0, 1], of primaries beaten by a hedge that are left to finish instead
     *     of being cancelled (see {@link Builder#loserSampling(double)})
     */
    public double loserSampling() {
        return loserSampling;
    }

    @Override
    public String toString() {
        return "HedgeConfig{maxAttempts=" + maxAttempts + ", delay=" + delayPolicy + ", budget="
                + (budget != null ? "shared" : Double.toString(budgetRatio)) + ", idempotentByDefault="
                + idempotentByDefault + ", deadline=" + deadline + "}";
    }

    /**
     * Builds a {@link HedgeConfig}. Each setter validates at once. Not thread-safe; {@link #build()}
     * copies, so a builder can be reused.
     */
    public static final class Builder {
        private int maxAttempts = 2;
        private DelayPolicy delayPolicy =
                DelayPolicy.percentile(0.95).budgetFeedback(true).build();
        private double budgetRatio = 0.05;
        private HedgeBudget budget;
        private LatencyTracker latencyTracker;
        private boolean idempotentByDefault;
        private Duration deadline;
        private ErrorClassifier errorClassifier = ErrorClassifier.defaults();
        private Ticker ticker = Ticker.system();
        private HedgeScheduler scheduler;
        private Executor attemptExecutor;
        private List<ContextPropagator<?>> contextPropagators = List.of();
        private Duration savingsWindow = Duration.ofMinutes(5);
        private double loserSampling;
        private CallDecorator callDecorator;

        private Builder() {}

        private Builder(HedgeConfig c) {
            this.maxAttempts = c.maxAttempts;
            this.delayPolicy = c.delayPolicy;
            this.budgetRatio = c.budgetRatio;
            this.budget = c.budget;
            this.latencyTracker = c.latencyTracker;
            this.idempotentByDefault = c.idempotentByDefault;
            this.deadline = c.deadline;
            this.errorClassifier = c.errorClassifier;
            this.ticker = c.ticker;
            this.scheduler = c.scheduler;
            this.attemptExecutor = c.attemptExecutor;
            this.contextPropagators = c.contextPropagators;
            this.savingsWindow = c.savingsWindow;
            this.loserSampling = c.loserSampling;
            this.callDecorator = c.callDecorator;
        }

        /**
         * Finagle's single knob: hedge after the {@code 1 - maxExtraLoad} percentile of recent
         * latency and allow at most {@code maxExtraLoad} extra attempts per primary call (a token
         * bucket, see {@link HedgeBudget}). The delay aims at slightly less demand while the budget
         * runs low ({@link PercentileDelay.Builder#budgetFeedback(boolean)}), so on a stationary load
         * the budget is a safety net that almost never denies. Replaces the delay policy and the
         * budget ratio.
         *
         * @param maxExtraLoad in (0, 1); 0.05 means p95 and a 5% budget
         * @return this
         */
        public Builder maxExtraLoad(double maxExtraLoad) {
            Checks.openRange("maxExtraLoad", maxExtraLoad, 0.0, 1.0);
            this.delayPolicy = DelayPolicy.percentile(1.0 - maxExtraLoad)
                    .budgetFeedback(true)
                    .build();
            this.budgetRatio = maxExtraLoad;
            return this;
        }

        /**
         * @param maxAttempts most attempts per call, primary included, in [1, 16]; default 2
         * @return this
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = (int) Checks.closedRange("maxAttempts", maxAttempts, 1, MAX_ATTEMPTS_LIMIT);
            return this;
        }

        /**
         * @param delayPolicy when to send the next attempt; default p95 of recent latency
         * @return this
         */
        public Builder delay(DelayPolicy delayPolicy) {
            this.delayPolicy = Checks.notNull("delay", delayPolicy);
            return this;
        }

        /**
         * @param ratio extra attempts allowed per primary call, in [0, 1], for the executor's own
         *     budget (a token bucket: each primary deposits {@code ratio} tokens, a hedge spends one,
         *     savings capped at a quarter of the last 30 s of deposits; see {@link HedgeBudget});
         *     default 0.05. Ignored when {@link #budget(HedgeBudget)} is set.
         * @return this
         */
        public Builder budgetRatio(double ratio) {
            this.budgetRatio = Checks.closedRange("budgetRatio", ratio, 0.0, 1.0);
            return this;
        }

        /**
         * @param budget a budget instance, shared with every executor built from this config
         * @return this
         */
        public Builder budget(HedgeBudget budget) {
            this.budget = Checks.notNull("budget", budget);
            return this;
        }

        /**
         * @param latencyTracker a tracker instance, shared with every executor built from this config
         *     (and with adapters that record latency themselves)
         * @return this
         */
        public Builder latencyTracker(LatencyTracker latencyTracker) {
            this.latencyTracker = Checks.notNull("latencyTracker", latencyTracker);
            return this;
        }

        /**
         * @param idempotent whether calls that do not say are idempotent (may be hedged); default
         *     {@code false}
         * @return this
         */
        public Builder idempotentByDefault(boolean idempotent) {
            this.idempotentByDefault = idempotent;
            return this;
        }

        /**
         * @param deadline the overall deadline of a call: when it passes, the call fails with
         *     {@link DeadlineExceededException} and every attempt is cancelled; > 0; default none
         * @return this
         */
        public Builder deadline(Duration deadline) {
            this.deadline = Checks.positive("deadline", deadline);
            return this;
        }

        /**
         * @param classifier decides which failures start another attempt and which end the call
         * @return this
         */
        public Builder errorClassifier(ErrorClassifier classifier) {
            this.errorClassifier = Checks.notNull("errorClassifier", classifier);
            return this;
        }

        /**
         * @param ticker the time source; default {@link Ticker#system()}
         * @return this
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Checks.notNull("ticker", ticker);
            return this;
        }

        /**
         * @param scheduler runs hedge timers and deadlines; default {@link Schedulers#shared()}
         * @return this
         */
        public Builder scheduler(HedgeScheduler scheduler) {
            this.scheduler = Checks.notNull("scheduler", scheduler);
            return this;
        }

        /**
         * @param executor runs the attempts of the sync form ({@code execute(Callable)}); default a
         *     virtual thread per attempt on JDK 21+, else a shared cached pool of daemon threads.
         *     Give hedges their own pool: attempts queued behind the callers they should rescue
         *     cannot rescue them.
         * @return this
         */
        public Builder attemptExecutor(Executor executor) {
            this.attemptExecutor = Checks.notNull("attemptExecutor", executor);
            return this;
        }

        /**
         * @param propagators carry thread-local context (MDC, tracing) from the caller into every
         *     attempt, for both forms
         * @return this
         */
        public Builder contextPropagators(List<? extends ContextPropagator<?>> propagators) {
            Objects.requireNonNull(propagators, "contextPropagators must not be null");
            propagators.forEach(p -> Objects.requireNonNull(p, "contextPropagators must not contain null"));
            this.contextPropagators = List.copyOf(propagators);
            return this;
        }

        /**
         * @param window how long a call counts in {@link HedgedExecutor#savings()} (hedged latency
         *     beside the estimated unhedged latency), {@code > 0}; default 5 min. At low rates the
         *     window keeps up to 10,000 calls for up to an hour (or this window, if longer).
         * @return this
         */
        public Builder savingsWindow(Duration window) {
            this.savingsWindow = Checks.positive("savingsWindow", window);
            return this;
        }

        /**
         * Lets a share of the primaries that lose to a hedge run to completion instead of being
         * cancelled, so {@link HedgedExecutor#savings()} sees their real latency (LinkedIn Rest.li
         * lets every loser finish for the same purpose; this does it for a sample). A cancelled
         * primary only tells that its latency exceeded the time it ran, and in the deep tail those
         * lower bounds are nearly all there is: without sampling, the estimated unhedged p99.9 can be
         * off by a third on heavy-tailed latency (see {@code
         * docs/benchmarks.md#how-far-to-trust-savings-the-unhedged-estimate}). The sample is
         * taken deterministically (every {@code 1/share}-th such primary), its latency also feeds the
         * delay's tracker, and it is still cancelled after 100 times the time the call took (at
         * least 1 s, at most {@link #savingsWindow(Duration)}), so a hanging replica holds no attempt
         * for long. The cost: the servers finish the work of that share of beaten primaries, and
         * their cancel hooks run only if they reach that bound. In the simulator (see {@code
         * docs/benchmarks.md#how-far-to-trust-savings-the-unhedged-estimate}) a share of 0.5 gave back up to a quarter of the unhedged busy time
         * that cancelling had saved, and behind a queue at 90% utilization it left hedged p99.9 at
         * 0.68x unhedged instead of 0.49x (share 1.0: no gain at all), which is why the default is
         * 0. Calls that fail, time out or are cancelled by the caller still cancel every attempt.
         *
         * @param share in [0, 1]; default 0 (every loser is cancelled)
         * @return this
         */
        public Builder loserSampling(double share) {
            this.loserSampling = Checks.closedRange("loserSampling", share, 0, 1);
            return this;
        }

        /**
         * Wraps each call's attempt function, for instrumentation such as {@code
         * io.github.hedge.core.observation.HedgeObservations} (a span per call and per attempt).
         *
         * @param decorator the decorator, or {@code null} for none (the default)
         * @return this
         */
        public Builder callDecorator(CallDecorator decorator) {
            this.callDecorator = decorator;
            return this;
        }

        /** @return the configuration */
        public HedgeConfig build() {
            return new HedgeConfig(this);
        }
    }
}

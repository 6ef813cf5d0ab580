package io.github.hedge.core;

import io.github.hedge.core.event.HedgeEvents;
import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.internal.Engine;
import io.github.hedge.core.internal.SyncAttempts;
import io.github.hedge.core.spi.CallDecorator;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/**
 * Runs one logical call as up to {@code maxAttempts} attempts: the primary starts at once; if it
 * has not succeeded after the {@link DelayPolicy delay}, a hedge starts (on another target, if the
 * attempt function picks one from {@link AttemptContext#triedTargets()}), and so on. The first
 * success wins and the losers are cancelled: their own futures and {@link
 * AttemptContext#onCancel cancel hooks}, not a derived future.
 *
 * <ul>
 *   <li>A failure never wins while another attempt is in flight. A retryable failure (see {@link
 *       ErrorClassifier}) starts the next attempt at once, budget permitting; a fatal one ends the
 *       call at once. When every attempt failed, the caller gets the primary's exception,
 *       unchanged: an attempt's exception is never mutated (it may be a shared instance); the
 *       others are in {@link io.github.hedge.core.event.CallCompleted}'s trace. Server pushback
 *       that arrives with a failure delays the next attempt until it ends.
 *   <li>A non-idempotent call runs exactly once.
 *   <li>Every hedge takes a token from the {@link HedgeBudget}; without one it is not sent.
 *   <li>Cancelling the returned future, or completing it yourself by any method of {@code
 *       CompletableFuture} (including {@code obtrudeValue} and {@code completeAsync}), cancels
 *       every attempt, and no attempt function is called afterwards; the optional deadline ends
 *       the call and cancels what runs.
 *   <li>An attempt function may return any {@link java.util.concurrent.CompletionStage}: a
 *       {@code CompletableFuture}, a {@code minimalCompletionStage()}, or a foreign
 *       implementation. User code the executor calls (cancel hooks, listeners, delay policies,
 *       error classifiers, context propagators) may throw any {@code Throwable}: it is logged once
 *       and ignored, and the call still settles.
 *   <li>Each attempt's own latency (winners, late successes, and the elapsed time of cancelled
 *       losers) feeds the {@link LatencyTracker}; failures do not, and the hedged end-to-end
 *       latency never does, so an adaptive delay cannot ratchet up.
 * </ul>
 *
 * <pre>{@code
 * HedgedExecutor executor = HedgedExecutor.of("users", HedgeConfig.builder()
 *         .maxExtraLoad(0.05)          // p95 delay, 5% budget
 *         .idempotentByDefault(true)
 *         .build());
 * CompletableFuture<User> user = executor.executeAsync(ctx -> client.getUser(id, ctx.triedTargets()));
 * }</pre>
 *
 * <p>Thread-safe; one instance serves any number of concurrent calls. An executor holds no
 * thread of its own: timers run on the configured scheduler.
 */
public final class HedgedExecutor {
    private final Engine engine;
    private final CallDecorator decorator;
    /** What {@link #decorator} is shown of this executor. */
    private final CallDecorator.Executor view;

    private HedgedExecutor(String name, HedgeConfig config) {
        this.engine = new Engine(name, config);
        this.decorator = config.callDecorator();
        this.view = new CallDecorator.Executor() {
            @Override
            public String name() {
                return engine.name();
            }

            @Override
            public HedgeEvents events() {
                return HedgedExecutor.this.events();
            }

            @Override
            public int maxAttempts() {
                return engine.config().maxAttempts();
            }

            @Override
            public String toString() {
                return HedgedExecutor.this.toString();
            }
        };
    }

    /**
     * @param name the executor's name, used in events, metrics tags and logs; low-cardinality
     * @param config its configuration
     * @return a new executor
     */
    public static HedgedExecutor of(String name, HedgeConfig config) {
        Checks.name("name", name);
        Objects.requireNonNull(config, "config must not be null");
        return new HedgedExecutor(name, config);
    }

    /**
     * @param name the executor's name
     * @return an executor with {@link HedgeConfig#ofDefaults()}: note that calls are then hedged
     *     only when they declare themselves idempotent
     */
    public static HedgedExecutor ofDefaults(String name) {
        return of(name, HedgeConfig.ofDefaults());
    }

    /** @return the name */
    public String name() {
        return engine.name();
    }

    /** @return the configuration */
    public HedgeConfig config() {
        return engine.config();
    }

    /** @return the event stream: subscribe to follow calls */
    public HedgeEvents events() {
        return engine.events();
    }

    /** @return the latency tracker that feeds adaptive delays (shared if the config set one) */
    public LatencyTracker latencyTracker() {
        return engine.tracker();
    }

    /** @return the hedge budget (shared if the config set one) */
    public HedgeBudget budget() {
        return engine.budget();
    }

    /**
     * @return the delay the policy would give the first hedge of a call starting now, in
     *     nanoseconds, or {@link DelayPolicy#NO_HEDGE}: read as a call reads it, with the budget's
     *     fill and ratio, so a delay raised to what the budget can pay (budget feedback) shows here
     *     as it is applied
     */
    public long currentDelayNanos() {
        return engine.currentDelayNanos();
    }

    /**
     * @return where {@link #currentDelayNanos()} comes from now: the adaptive delay's estimate, its
     *     warm-up bound, a fallback of your own, or a policy that reads no latency
     */
    public DelaySource currentDelaySource() {
        return engine.delaySource();
    }

    /**
     * What hedging saved on this executor's own traffic: the latency of its successful calls
     * beside an estimate, from the same calls, of the latency they would have had without hedging
     * (cancelled primaries counted as the lower bounds they are), over {@link
     * HedgeConfig#savingsWindow()}. Reads cached values; cheap enough for a metrics poll.
     *
     * @return the savings now
     */
    public HedgeSavings savings() {
        return engine.savings();
    }

    /** @return counters since creation */
    public HedgeStats stats() {
        return engine.stats();
    }

    /**
     * Runs a call with the executor's defaults.
     *
     * @param attempt starts one attempt; called once per attempt
     * @param <T> the result type
     * @return the caller's future: the first success, or the failure described in the class comment
     */
    public <T> CompletableFuture<T> executeAsync(AttemptFunction<T> attempt) {
        return executeAsync(CallOptions.defaults(), attempt);
    }

    /**
     * Runs a call.
     *
     * @param options per-call settings (idempotence, deadline, operation label)
     * @param attempt starts one attempt; called once per attempt
     * @param <T> the result type
     * @return the caller's future
     */
    public <T> CompletableFuture<T> executeAsync(CallOptions options, AttemptFunction<T> attempt) {
        Objects.requireNonNull(options, "options must not be null");
        Objects.requireNonNull(attempt, "attempt must not be null");
        return engine.execute(options, decorator == null ? attempt : decorate(options, attempt));
    }

    /**
     * Runs a blocking call with the executor's defaults: each attempt runs {@code callable} on the
     * configured attempt executor; the caller blocks until the call ends.
     *
     * @param callable the blocking work; a losing attempt's thread is interrupted
     * @param <T> the result type
     * @return the first success
     * @throws Exception exactly what the callable threw (the primary's exception when every
     *     attempt failed, or a fatal one; an {@code ExecutionException} the callable threw is not
     *     unwrapped), or {@link DeadlineExceededException}; {@link InterruptedException} if the
     *     caller was interrupted, which cancels every attempt and, following the JDK's convention
     *     for methods that throw it, leaves the caller's interrupt status cleared
     */
    public <T> T execute(Callable<T> callable) throws Exception {
        return execute(CallOptions.defaults(), callable);
    }

    /**
     * Runs a blocking call.
     *
     * @param options per-call settings
     * @param callable the blocking work; a losing attempt's thread is interrupted
     * @param <T> the result type
     * @return the first success
     * @throws Exception as {@link #execute(Callable)}
     */
    public <T> T execute(CallOptions options, Callable<T> callable) throws Exception {
        Objects.requireNonNull(options, "options must not be null");
        Objects.requireNonNull(callable, "callable must not be null");
        AttemptFunction<T> attempt = SyncAttempts.attemptFunction(engine, callable);
        return SyncAttempts.await(engine.execute(options, decorator == null ? attempt : decorate(options, attempt)));
    }

    private <T> AttemptFunction<T> decorate(CallOptions options, AttemptFunction<T> attempt) {
        return Objects.requireNonNull(decorator.decorate(view, options, attempt), "the call decorator returned null");
    }

    @Override
    public String toString() {
        return "HedgedExecutor{" + engine.name() + ", " + engine.config() + "}";
    }
}

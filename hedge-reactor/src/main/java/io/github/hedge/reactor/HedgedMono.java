package io.github.hedge.reactor;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.reactor.internal.AttemptSubscriber;
import io.github.hedge.reactor.internal.LoserValues;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * A {@code Mono} whose every subscription is one hedged call of a {@link HedgedExecutor}; each
 * attempt of the call subscribes to a {@code Mono} of its own. The Reactor form of {@link
 * HedgedExecutor#executeAsync(CallOptions, io.github.hedge.core.AttemptFunction)}, with the same
 * rules, events, metrics and statistics:
 *
 * <ul>
 *   <li>The first attempt that emits a value, or completes empty, wins: the {@code Mono} emits that
 *       value (or completes empty). An error never wins while another attempt is in flight; when
 *       every attempt failed, the {@code Mono} fails with the primary's error, unchanged.
 *   <li>A losing attempt's subscription is cancelled, so the work behind it stops (Reactor Netty
 *       closes the request's connection, say).
 *   <li>Cancelling the subscription to the returned {@code Mono} ({@code dispose()}, a {@code
 *       timeout} operator downstream, a {@code take}) cancels the call: every attempt's
 *       subscription is cancelled and no attempt starts afterwards.
 *   <li>The subscriber's {@link reactor.util.context.Context Context} reaches every attempt, with
 *       the attempt itself under {@link #currentAttempt(ContextView)}.
 *   <li>A non-idempotent call (by its {@link CallOptions} or the executor's default) subscribes
 *       exactly once.
 *   <li>A value that does not reach the subscriber (a loser's late success, or any value once the
 *       subscriber cancelled) goes to Reactor's discard hook ({@code doOnDiscard}), as Reactor's own
 *       operators do, so pooled buffers can be released.
 * </ul>
 *
 * <p>The primary subscribes on the thread that subscribes to the returned {@code Mono}; hedges
 * subscribe on the executor's scheduler thread. An attempt's {@code Mono} must not block when
 * subscribed (put blocking work behind {@code subscribeOn(Schedulers.boundedElastic())}), or it
 * delays the other calls' hedges.
 *
 * <pre>{@code
 * Mono<User> user = HedgedMono.of(executor, CallOptions.idempotent(), attempt ->
 *         client.get().uri(pickInstance(attempt.triedTargets()) + "/users/" + id)
 *                 .retrieve().bodyToMono(User.class));
 * }</pre>
 *
 * <p>Stateless and thread-safe; the returned {@code Mono} may be subscribed any number of times,
 * concurrently, and each subscription is a call of its own.
 */
public final class HedgedMono {
    /** The key under which an attempt's {@link AttemptContext} sits in its Reactor context. */
    private static final Object ATTEMPT_KEY = new Object() {
        @Override
        public String toString() {
            return "hedge.attempt";
        }
    };

    private HedgedMono() {}

    /**
     * @param executor the executor that runs the calls
     * @param options per-call settings (idempotence, deadline, operation label)
     * @param attempt returns the {@code Mono} of one attempt; called once per attempt, on the
     *     thread that starts it; it must not block
     * @param <T> the value type
     * @return a {@code Mono} each subscription to which is one hedged call
     */
    public static <T> Mono<T> of(
            HedgedExecutor executor,
            CallOptions options,
            Function<? super AttemptContext, ? extends Mono<? extends T>> attempt) {
        Objects.requireNonNull(executor, "executor must not be null");
        Objects.requireNonNull(options, "options must not be null");
        Objects.requireNonNull(attempt, "attempt must not be null");
        return Mono.deferContextual(view -> {
            Context context = Context.of(view);
            LoserValues<T> losers = new LoserValues<>(context);
            CompletableFuture<T> call = executor.executeAsync(options, ctx -> {
                Mono<? extends T> source = Objects.requireNonNull(
                        attempt.apply(ctx), "the attempt function returned null instead of a Mono");
                CompletableFuture<T> outcome = AttemptSubscriber.start(source, context.put(ATTEMPT_KEY, ctx), ctx);
                outcome.thenAccept(losers::produced);
                return outcome;
            });
            call.whenComplete((value, error) -> losers.settled(error == null ? value : null));
            return Mono.fromFuture(call, false);
        });
    }

    /**
     * Like {@link #of(HedgedExecutor, CallOptions, Function)} with the executor's default options.
     *
     * @param executor the executor that runs the calls
     * @param attempt returns the {@code Mono} of one attempt
     * @param <T> the value type
     * @return a {@code Mono} each subscription to which is one hedged call
     */
    public static <T> Mono<T> of(
            HedgedExecutor executor, Function<? super AttemptContext, ? extends Mono<? extends T>> attempt) {
        return of(executor, CallOptions.defaults(), attempt);
    }

    /**
     * The attempt a {@code Mono} runs in, read from its context: its number, the targets earlier
     * attempts reported (to pick another instance), where to {@link AttemptContext#reportTarget
     * report} its own.
     *
     * <pre>{@code
     * Mono.deferContextual(view -> {
     *     AttemptContext attempt = HedgedMono.currentAttempt(view).orElseThrow();
     *     String instance = pickInstance(attempt.triedTargets());
     *     attempt.reportTarget(instance);
     *     return client.get().uri(instance + "/users/" + id).retrieve().bodyToMono(User.class);
     * }).transformDeferred(HedgeOperator.of(executor));
     * }</pre>
     *
     * @param context a subscriber's context
     * @return the attempt, or empty outside a hedged call
     */
    public static Optional<AttemptContext> currentAttempt(ContextView context) {
        return context.getOrEmpty(ATTEMPT_KEY);
    }
}

package io.github.hedge.reactor;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * Hedges a {@code Mono}: {@code mono.transformDeferred(HedgeOperator.of(executor))}. Every
 * subscription to the result is one call of the executor, and each attempt of it subscribes to the
 * source anew, as {@code Mono.defer} would; see {@link HedgedMono} for the rules (first success
 * wins, losers' subscriptions cancelled, the subscriber's context in every attempt).
 *
 * <p>The source must be one that does the work again on each subscription (a Reactor Netty or
 * {@code WebClient} request, a {@code Mono.fromCallable}, a {@code Mono.defer} around a call); a
 * {@code Mono.just(value)} computed before, or a {@code cache()}d {@code Mono}, gives every attempt
 * the same answer and hedging it achieves nothing. A publisher that allows one subscription (the
 * Cassandra driver's {@code ReactiveResultSet}) must be created inside {@code Mono.defer}.
 *
 * <p>Only a {@code Mono} can be hedged: the operator's type does not fit a {@code Flux}. A {@code
 * Flux} has no single answer whose arrival ends a call, and replaying a stream from another
 * attempt could repeat or lose elements. Hedge the {@code Mono} that makes the request, or turn the
 * {@code Flux} into one first ({@code next()}, {@code collectList()}), so what is hedged is
 * explicit.
 *
 * <p>Immutable and thread-safe; one instance may be applied to any number of {@code Mono}s.
 *
 * @param <T> the value type
 */
public final class HedgeOperator<T> implements Function<Mono<T>, Mono<T>> {
    private final HedgedExecutor executor;
    private final CallOptions options;

    private HedgeOperator(HedgedExecutor executor, CallOptions options) {
        this.executor = Objects.requireNonNull(executor, "executor must not be null");
        this.options = Objects.requireNonNull(options, "options must not be null");
    }

    /**
     * @param executor the executor that runs the calls
     * @param <T> the value type
     * @return an operator with the executor's default options (so a call is hedged only if the
     *     executor's {@code idempotentByDefault} is set)
     */
    public static <T> HedgeOperator<T> of(HedgedExecutor executor) {
        return new HedgeOperator<>(executor, CallOptions.defaults());
    }

    /**
     * @param executor the executor that runs the calls
     * @param options per-call settings: idempotence, deadline, operation label
     * @param <T> the value type
     * @return an operator
     */
    public static <T> HedgeOperator<T> of(HedgedExecutor executor, CallOptions options) {
        return new HedgeOperator<>(executor, options);
    }

    /**
     * @param source the {@code Mono} each attempt subscribes to
     * @return a {@code Mono} each subscription to which is one hedged call
     */
    @Override
    public Mono<T> apply(Mono<T> source) {
        Objects.requireNonNull(source, "source must not be null");
        return HedgedMono.of(executor, options, attempt -> source);
    }
}

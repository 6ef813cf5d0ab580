package io.github.hedge.http;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.http.internal.BodyTee;
import io.github.hedge.http.internal.HttpErrors;
import io.github.hedge.http.internal.Produced;
import io.github.hedge.http.internal.StatusFailure;
import io.github.hedge.http.internal.TooLarge;
import io.github.hedge.reactor.HedgedMono;
import java.net.URI;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * Hedges {@code WebClient} requests: {@code WebClient.builder().filter(filter)}. Each request is one
 * call of a {@link HedgedExecutor} (built on hedge-reactor's {@link HedgedMono}), so it publishes the
 * executor's events, metrics and observations.
 *
 * <ul>
 *   <li>Which requests may run more than once, and which statuses are failures, is the {@link
 *       HttpHedgePolicy}'s decision. A request that may not runs exactly once.
 *   <li>An attempt wins when its response headers arrive with a status that is not a failure; its
 *       response, headers and body, is the one the caller reads. The other attempts' subscriptions are
 *       cancelled (Reactor Netty closes their connections) and responses they already had are released.
 *   <li>When every attempt failed, the caller gets the primary's response (a 503, say) or error, as
 *       without hedging.
 *   <li>Cancelling the caller's subscription ({@code timeout()}, {@code dispose()}) cancels every
 *       attempt. A transport timeout of an attempt (Reactor Netty's response timeout) ends the call
 *       and cancels the other attempts.
 *   <li>The request body is written by the primary with the client's codecs and kept in memory, up to
 *       {@link HttpHedgePolicy#maxHedgedRequestBytes()}; hedges send the same bytes. A request whose
 *       {@code Content-Length} is over the limit runs once; a body found over the limit while the
 *       primary sends it (no {@code Content-Length}), or a streamed one, stops further attempts. Both
 *       are counted in {@link #requestsTooLarge()} and reported as {@code NotHedged} with reason
 *       {@code REQUEST_TOO_LARGE}.
 *   <li>With an {@link InstanceChooser}, each attempt goes to the instance it picks (a hedge to one the
 *       call has not tried); without one, every attempt goes to the request's URI.
 * </ul>
 *
 * <p>Place it as the last filter ({@code filters(f -> f.add(filter))}), so that every attempt runs the
 * filters after it and the caller's filters see one exchange. Immutable and thread-safe.
 */
public final class HedgingExchangeFilterFunction implements ExchangeFilterFunction {
    private final Supplier<HedgedExecutor> executors;
    private final HttpHedgePolicy policy;
    private final InstanceChooser chooser;
    private final TooLarge tooLarge = new TooLarge();

    private HedgingExchangeFilterFunction(
            Supplier<HedgedExecutor> executors, HttpHedgePolicy policy, InstanceChooser chooser) {
        this.executors = Objects.requireNonNull(executors, "executor must not be null");
        this.policy = Objects.requireNonNull(policy, "policy must not be null");
        this.chooser = chooser;
    }

    /**
     * @param executor the executor that runs the calls
     * @return a filter with {@link HttpHedgePolicy#defaults()} and no instance chooser
     */
    public static HedgingExchangeFilterFunction of(HedgedExecutor executor) {
        Objects.requireNonNull(executor, "executor must not be null");
        return new HedgingExchangeFilterFunction(() -> executor, HttpHedgePolicy.defaults(), null);
    }

    /**
     * @param executor the executor that runs the calls
     * @param policy which requests may be hedged, which statuses fail
     * @param chooser places each attempt on an instance, or null to send every attempt to the request's URI
     * @return the filter
     */
    public static HedgingExchangeFilterFunction of(
            HedgedExecutor executor, HttpHedgePolicy policy, InstanceChooser chooser) {
        Objects.requireNonNull(executor, "executor must not be null");
        return new HedgingExchangeFilterFunction(() -> executor, policy, chooser);
    }

    /**
     * Like {@link #of(HedgedExecutor, HttpHedgePolicy, InstanceChooser)}, with the executor looked
     * up for each request, so that one replaced in a {@code HedgedExecutorRegistry} takes effect for
     * the next request.
     *
     * @param executors returns the executor for a request; called once per request, must not block
     * @param policy which requests may be hedged, which statuses fail
     * @param chooser places each attempt on an instance, or null
     * @return the filter
     */
    public static HedgingExchangeFilterFunction of(
            Supplier<HedgedExecutor> executors, HttpHedgePolicy policy, InstanceChooser chooser) {
        return new HedgingExchangeFilterFunction(executors, policy, chooser);
    }

    /** @return the executor requests run on now */
    public HedgedExecutor executor() {
        return executors.get();
    }

    /** @return requests not hedged because their body was over the limit, since creation */
    public long requestsTooLarge() {
        return tooLarge.sum();
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        HedgedExecutor executor = executors.get();
        boolean idempotent = policy.isIdempotent(
                request.method(), request.url().getRawPath(), request.headers(), request.attributes());
        // a known Content-Length over the limit: the call runs once, reported as REQUEST_TOO_LARGE
        boolean overLimit = idempotent && request.headers().getContentLength() > policy.maxHedgedRequestBytes();
        if (overLimit) {
            tooLarge.record(executor.name(), policy.maxHedgedRequestBytes());
        }
        CallOptions options = CallOptions.builder()
                .idempotent(idempotent)
                .operation(request.method().name())
                .errorClassifier(HttpErrors.INSTANCE)
                .build();
        BodyTee body = idempotent && !overLimit ? new BodyTee(policy.maxHedgedRequestBytes()) : null;
        Produced<ClientResponse> produced = new Produced<>(
                r -> r.releaseBody().onErrorResume(e -> Mono.empty()).subscribe());
        Mono<ClientResponse> call = HedgedMono.of(executor, options, attempt -> {
            if (overLimit) {
                attempt.stopFurtherAttempts(NotHedged.Reason.REQUEST_TOO_LARGE);
            }
            ClientRequest.Builder b = ClientRequest.from(request);
            URI instance = chooser == null ? null : chooser.choose(request.url(), attempt);
            if (instance != null) {
                b.url(InstanceChooser.rewrite(request.url(), instance));
            }
            boolean primary = attempt.attemptNumber() == 1;
            if (body != null) {
                b.body(
                        primary
                                ? body.primary(request.body(), () -> {
                                    tooLarge.record(executor.name(), policy.maxHedgedRequestBytes());
                                    attempt.stopFurtherAttempts(NotHedged.Reason.REQUEST_TOO_LARGE);
                                })
                                : body.replay());
            }
            Mono<ClientResponse> exchange = next.exchange(b.build()).flatMap(response -> {
                produced.add(response);
                int status = response.statusCode().value();
                if (policy.isFailure(status)) {
                    return Mono.error(new StatusFailure(status, policy.isRetryable(status), response));
                }
                return Mono.just(response);
            });
            if (primary && body != null) {
                exchange = exchange.doFinally(s -> body.abandon());
            }
            return exchange;
        });
        return call.onErrorResume(StatusFailure.class, f -> Mono.just((ClientResponse) f.response()))
                .doOnNext(produced::settle)
                .doFinally(s -> {
                    if (s != SignalType.ON_COMPLETE) {
                        produced.settle(null);
                    }
                });
    }
}

package io.github.hedge.reactor.internal;

import io.github.hedge.core.AttemptContext;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * Subscribes to one attempt's {@code Mono} and completes a future with its outcome: its value, an
 * empty completion as {@code null}, or its error. Cancelling the attempt (it lost, the caller
 * cancelled, the deadline passed) cancels the subscription, so the work behind it stops; a value
 * that still arrives goes to Reactor's discard hook. Not part of the public API.
 *
 * <p>Thread-safe: the subscription may arrive, and the attempt be cancelled, on any thread, in any
 * order.
 *
 * @param <T> the value type
 */
public final class AttemptSubscriber<T> implements CoreSubscriber<T> {
    @SuppressWarnings("rawtypes")
    private static final AtomicReferenceFieldUpdater<AttemptSubscriber, Subscription> S =
            AtomicReferenceFieldUpdater.newUpdater(AttemptSubscriber.class, Subscription.class, "s");

    private final CompletableFuture<T> result = new CompletableFuture<>();
    private final Context context;
    private volatile Subscription s;

    private AttemptSubscriber(Context context) {
        this.context = context;
    }

    /**
     * Starts one attempt: subscribes {@code source} with {@code context} and ties its cancellation to
     * the attempt's.
     *
     * @param source the attempt's publisher, subscribed once
     * @param context the context the attempt's subscriber exposes
     * @param attempt the attempt, whose cancellation cancels the subscription
     * @param <T> the value type
     * @return the attempt's outcome
     */
    public static <T> CompletableFuture<T> start(
            org.reactivestreams.Publisher<? extends T> source, Context context, AttemptContext attempt) {
        AttemptSubscriber<T> subscriber = new AttemptSubscriber<>(context);
        attempt.onCancel(subscriber::cancel);
        if (!attempt.isCancelled()) {
            source.subscribe(subscriber);
        }
        return subscriber.result;
    }

    @Override
    public Context currentContext() {
        return context;
    }

    @Override
    public void onSubscribe(Subscription subscription) {
        if (Operators.setOnce(S, this, subscription)) {
            subscription.request(Long.MAX_VALUE);
        }
    }

    @Override
    public void onNext(T value) {
        if (!result.complete(value)) {
            // the attempt was cancelled (it lost, or the call ended) before its value came
            Operators.onDiscard(value, context);
        }
    }

    @Override
    public void onError(Throwable error) {
        result.completeExceptionally(error);
    }

    @Override
    public void onComplete() {
        result.complete(null); // the value came first (a Mono has one at most), or it was empty
    }

    private void cancel() {
        Operators.terminate(S, this);
    }
}

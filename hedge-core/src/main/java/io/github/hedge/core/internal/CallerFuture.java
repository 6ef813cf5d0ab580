package io.github.hedge.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * The first layer of a {@link HedgedCall}: the future the caller holds. Every way of completing it
 * from outside (cancel, complete, obtrude, completeAsync) ends the call through {@link
 * #endedFromOutside()}; the call itself answers through {@link #answer} and {@link #answerFailure},
 * which do not.
 */
abstract class CallerFuture<T> extends CompletableFuture<T> {

    /** The caller completed or cancelled this future: stop everything. */
    abstract void endedFromOutside();

    /** Completes the caller's future with the call's answer (not an ending from outside). */
    final boolean answer(T value) {
        return super.complete(value);
    }

    /** Fails the caller's future with the call's failure (not an ending from outside). */
    final boolean answerFailure(Throwable failure) {
        return super.completeExceptionally(failure);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean r = super.cancel(mayInterruptIfRunning);
        if (r) {
            endedFromOutside();
        }
        return r;
    }

    @Override
    public boolean complete(T value) {
        boolean r = super.complete(value);
        if (r) {
            endedFromOutside();
        }
        return r;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean r = super.completeExceptionally(ex);
        if (r) {
            endedFromOutside();
        }
        return r;
    }

    @Override
    public void obtrudeValue(T value) {
        super.obtrudeValue(value);
        endedFromOutside();
    }

    @Override
    public void obtrudeException(Throwable ex) {
        super.obtrudeException(ex);
        endedFromOutside();
    }

    /**
     * Completes the call with the supplier's value, computed on {@code executor}; like every other
     * completion from outside, it cancels the attempts. The JDK's implementation completes the
     * future without going through {@link #complete}, hence this override.
     */
    @Override
    public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier, Executor executor) {
        if (supplier == null || executor == null) {
            throw new NullPointerException();
        }
        executor.execute(() -> {
            if (isDone()) {
                return;
            }
            try {
                complete(supplier.get());
            } catch (Throwable t) {
                completeExceptionally(t);
            }
        });
        return this;
    }

    @Override
    public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier) {
        return completeAsync(supplier, defaultExecutor());
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }
}

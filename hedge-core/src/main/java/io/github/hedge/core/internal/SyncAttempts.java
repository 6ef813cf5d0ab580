package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;

/**
 * The sync form on top of the async engine: each attempt runs the callable on the attempt
 * executor; a cancelled attempt's thread is interrupted; the caller blocks. Internal.
 */
public final class SyncAttempts {
    private SyncAttempts() {}

    /** @return an attempt function that runs {@code callable} on the engine's attempt executor */
    public static <T> AttemptFunction<T> attemptFunction(Engine engine, Callable<T> callable) {
        Executor executor = engine.config.attemptExecutor();
        Callable<T> work = engine.propagators.isEmpty()
                ? callable
                : io.github.resilience4j.core.ContextPropagator.decorateCallable(engine.propagators, callable);
        return ctx -> {
            CompletableFuture<T> result = new CompletableFuture<>();
            FutureTask<Void> task = new FutureTask<>(() -> {
                try {
                    result.complete(work.call());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
                return null;
            });
            ctx.onCancel(() -> task.cancel(true));
            executor.execute(task);
            return result;
        };
    }

    /** Blocks for the call's outcome, rethrowing the attempt's own exception. */
    public static <T> T await(CompletableFuture<T> call) throws Exception {
        try {
            return call.get();
        } catch (InterruptedException e) {
            call.cancel(true);
            Thread.currentThread().interrupt();
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = HedgedCall.unwrap(e);
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }
}

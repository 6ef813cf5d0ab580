package io.github.hedge.core.internal;

import io.github.hedge.core.AttemptFunction;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
        io.github.hedge.core.spi.CallDecorator decorator = engine.config.callDecorator();
        return ctx -> {
            CompletableFuture<T> result = new CompletableFuture<>();
            FutureTask<Void> task = new FutureTask<>(() -> {
                try {
                    result.complete(work.call());
                } catch (Throwable t) {
                    // the engine removes one CompletionException layer (the wrapper of dependent
                    // stages): add one around the callable's own, so the caller gets it unchanged
                    result.completeExceptionally(t instanceof CompletionException ? new CompletionException(t) : t);
                }
                return null;
            });
            ctx.onCancel(() -> task.cancel(true));
            executor.execute(decorator == null ? task : decorator.decorateBlockingTask(task));
            return result;
        };
    }

    /**
     * Blocks for the call's outcome, rethrowing exactly the exception the winning or failing
     * attempt's callable threw (never its cause).
     *
     * <p>Interruption follows the JDK's convention for methods that throw {@link
     * InterruptedException} (as {@code Thread.sleep} and {@code Future.get} do): the call is
     * cancelled (every attempt's thread interrupted) and {@code InterruptedException} is thrown with
     * the caller's interrupt status cleared, so the caller's next blocking call does not fail at
     * once. Code that cannot propagate it should re-assert the status itself.
     */
    public static <T> T await(CompletableFuture<T> call) throws Exception {
        try {
            return call.get();
        } catch (InterruptedException e) {
            call.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            // the stored exception itself: get() would also strip a CompletionException the
            // callable threw, while handle() sees exactly what the call failed with
            Throwable cause = call.handle((v, t) -> t).getNow(null);
            if (cause == null) {
                cause = e.getCause();
            }
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

package io.github.hedge.core.spi;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.event.HedgeEvents;

/**
 * Wraps each call's attempt function, so instrumentation can run code around every attempt's start
 * on the thread that starts it (a tracing scope, say) and follow the call through the executor's
 * {@link Executor#events() events}. Set it with {@link io.github.hedge.core.HedgeConfig.Builder#callDecorator}.
 * {@code io.github.hedge.core.observation.HedgeObservations} is the built-in one.
 *
 * <p>Called by every executor that uses the configuration, for both the async and the blocking
 * form, so it must be thread-safe. What it throws goes to the caller of {@code executeAsync} or
 * {@code execute}: the call does not start.
 */
public interface CallDecorator {
    /**
     * What a decorator may know of the executor running a call. The executor implements it; a view,
     * so a decorator depends on no more of the executor than this. Thread-safe.
     */
    interface Executor {
        /** @return the executor's name */
        String name();

        /** @return the executor's events, which name each call by {@code AttemptContext#callId()} */
        HedgeEvents events();

        /** @return the most attempts a call of this executor makes, the primary included, in [1, 16] */
        int maxAttempts();
    }

    /**
     * Called once per call, on the caller's thread, before the primary starts.
     *
     * @param executor the executor running the call
     * @param options the call's options
     * @param attempt the attempt function the caller gave
     * @param <T> the result type
     * @return the function the executor calls once per attempt instead; {@code attempt} itself to
     *     leave the call alone
     */
    <T> AttemptFunction<T> decorate(Executor executor, CallOptions options, AttemptFunction<T> attempt);

    /**
     * Wraps the task a blocking attempt ({@code HedgedExecutor.execute}) runs on the attempt
     * executor. Called on the thread that starts the attempt, inside the function {@link #decorate}
     * returned, so thread-local context read here is the attempt's. Unchanged by default.
     *
     * @param task runs the caller's callable
     * @return the task to hand to the attempt executor
     */
    default Runnable decorateBlockingTask(Runnable task) {
        return task;
    }
}

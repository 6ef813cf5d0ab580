package io.github.hedge.core;

import java.util.concurrent.CompletionStage;

/**
 * Starts one attempt of a call and returns its result asynchronously. Called once per attempt,
 * on the caller's thread for the primary and on a scheduler thread for hedges, so it must start
 * the work and return without blocking.
 *
 * <p>Throwing, returning {@code null} or returning an already-completed stage are all attempt
 * outcomes like any other (a failure, a failure, a result). If the stage is a
 * {@link java.util.concurrent.Future}, a losing attempt's own future is cancelled.
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface AttemptFunction<T> {
    /**
     * @param context the attempt: its number, targets already tried, the cancel hook
     * @return the attempt's result, as a stage
     * @throws Exception a synchronous failure of this attempt
     */
    CompletionStage<T> start(AttemptContext context) throws Exception;
}

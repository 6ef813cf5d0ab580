package io.github.hedge.cassandra.internal;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.InvalidKeyspaceException;
import com.datastax.oss.driver.api.core.RequestThrottlingException;
import com.datastax.oss.driver.api.core.connection.FrameTooLongException;
import com.datastax.oss.driver.api.core.servererrors.CASWriteUnknownException;
import com.datastax.oss.driver.api.core.servererrors.FunctionFailureException;
import com.datastax.oss.driver.api.core.servererrors.ProtocolError;
import com.datastax.oss.driver.api.core.servererrors.QueryValidationException;
import com.datastax.oss.driver.api.core.servererrors.ReadFailureException;
import com.datastax.oss.driver.api.core.servererrors.TruncateException;
import com.datastax.oss.driver.api.core.servererrors.WriteFailureException;
import com.datastax.oss.driver.api.core.type.codec.CodecNotFoundException;
import io.github.hedge.core.DeadlineExceededException;
import io.github.hedge.core.ErrorClassifier;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Which driver errors end a hedged call whatever the executor's classifier says, and how the
 * call's deadline is reported. Stateless, thread-safe.
 */
public final class DriverErrors {
    private DriverErrors() {}

    /**
     * Whether an attempt's error ends the call: another replica would answer the same (the request
     * is bad, the data makes it fail), a further attempt is unsafe (a lightweight transaction whose
     * outcome is unknown), or the caller's own limits say stop (the request timeout, the session's
     * throttler).
     *
     * <ul>
     *   <li>{@link QueryValidationException} (syntax error, invalid query, invalid configuration,
     *       unauthorized, already exists), {@link FunctionFailureException}, {@link ProtocolError}:
     *       the driver's own "unrecoverable" errors, never given to its retry policy;
     *   <li>{@link ReadFailureException}, {@link WriteFailureException}: the replicas failed (a
     *       tombstone limit, a corrupt sstable); the driver's default retry policy rethrows them;
     *   <li>{@link CASWriteUnknownException}: an LWT whose outcome is unknown; a second run answers
     *       "not applied" when the first one applied;
     *   <li>{@link TruncateException}: a TRUNCATE that failed;
     *   <li>{@link DriverTimeoutException}: the caller's request timeout, which bounds the call;
     *   <li>{@link RequestThrottlingException}: the session's throttler, shared by every attempt;
     *   <li>{@link InvalidKeyspaceException}, {@link CodecNotFoundException}, {@link
     *       FrameTooLongException}, {@link IllegalArgumentException}: the request cannot be encoded
     *       (a value with no codec, a frame too long), whatever the replica.
     * </ul>
     *
     * <p>Not {@link IllegalStateException}: a session closing gracefully fails the attempts that
     * start after the close with it ("Driver channel is closing") while the attempts already running
     * still answer, and one of them must be allowed to win.
     *
     * @param error an attempt's error, unwrapped
     * @return whether it ends the call
     */
    public static boolean endsTheCall(Throwable error) {
        return error instanceof QueryValidationException
                || error instanceof FunctionFailureException
                || error instanceof ProtocolError
                || error instanceof ReadFailureException
                || error instanceof WriteFailureException
                || error instanceof CASWriteUnknownException
                || error instanceof TruncateException
                || error instanceof DriverTimeoutException
                || error instanceof RequestThrottlingException
                || error instanceof InvalidKeyspaceException
                || error instanceof CodecNotFoundException
                || error instanceof FrameTooLongException
                || error instanceof IllegalArgumentException;
    }

    /**
     * @param rest decides the errors {@link #endsTheCall} does not (the executor's classifier)
     * @return a classifier that ends the call on those errors and asks {@code rest} about the others
     */
    public static ErrorClassifier classifier(ErrorClassifier rest) {
        return error -> {
            Throwable e = nodeError(error);
            return endsTheCall(e) ? ErrorClassifier.Decision.FATAL : rest.classify(e);
        };
    }

    /**
     * An attempt is pinned to one node, so when the driver's retry policy says "next node" the
     * attempt ends in an {@link AllNodesFailedException} around that node's one error: the error
     * that is classified is that one.
     *
     * @param error an attempt's error
     * @return the node's error inside it, or {@code error} itself
     */
    static Throwable nodeError(Throwable error) {
        if (error instanceof AllNodesFailedException) {
            Throwable only = null;
            for (List<Throwable> errors :
                    ((AllNodesFailedException) error).getAllErrors().values()) {
                for (Throwable t : errors) {
                    if (only != null) {
                        return error; // several: the driver tried more than one node, keep its summary
                    }
                    only = t;
                }
            }
            return only != null ? only : error;
        }
        return error;
    }

    /**
     * The caller's future of a hedged call, with the call's deadline reported as the driver reports
     * its request timeout ({@link DriverTimeoutException}, "Query timed out after PT2S"). Cancelling
     * it cancels the call, hence every attempt.
     *
     * @param call the executor's future
     * @param timeout the deadline the call was given
     * @param <T> the result type
     * @return the caller's future
     */
    public static <T> CompletableFuture<T> reportDeadlineAsTimeout(CompletableFuture<T> call, Duration timeout) {
        CompletableFuture<T> out = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                boolean cancelled = super.cancel(mayInterruptIfRunning);
                call.cancel(mayInterruptIfRunning);
                return cancelled;
            }
        };
        call.whenComplete((value, error) -> {
            if (error == null) {
                out.complete(value);
                return;
            }
            Throwable cause =
                    error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (cause instanceof DeadlineExceededException) {
                DriverTimeoutException timedOut = new DriverTimeoutException("Query timed out after " + timeout);
                timedOut.addSuppressed(cause);
                out.completeExceptionally(timedOut);
            } else {
                out.completeExceptionally(cause);
            }
        });
        return out;
    }
}

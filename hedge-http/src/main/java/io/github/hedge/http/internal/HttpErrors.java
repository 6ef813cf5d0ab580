package io.github.hedge.http.internal;

import io.github.hedge.core.ErrorClassifier;

/**
 * What an HTTP attempt's failure means for the call: a retryable status starts the next attempt; any
 * other failure status ends the call; a client timeout (the transport's read or response timeout)
 * ends the call, so it stops every attempt; other I/O failures (connection refused, reset) start the
 * next attempt. Stateless, thread-safe.
 */
public final class HttpErrors implements ErrorClassifier {
    /** The instance. */
    public static final HttpErrors INSTANCE = new HttpErrors();

    private HttpErrors() {}

    @Override
    public Decision classify(Throwable error) {
        if (error instanceof Error) {
            return Decision.FATAL;
        }
        if (error instanceof StatusFailure f) {
            return f.retryable() ? Decision.RETRYABLE : Decision.FATAL;
        }
        return isTimeout(error) ? Decision.FATAL : Decision.RETRYABLE;
    }

    /**
     * @param error a failure
     * @return whether it, or a cause of it, is a client-side timeout
     */
    public static boolean isTimeout(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException
                    || t instanceof java.util.concurrent.TimeoutException
                    || t.getClass().getSimpleName().endsWith("TimeoutException")) {
                return true;
            }
        }
        return false;
    }
}

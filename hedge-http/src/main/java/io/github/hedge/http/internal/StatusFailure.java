package io.github.hedge.http.internal;

/**
 * An attempt whose response had a failure status: the core sees it as a failed attempt, so it never
 * wins while another attempt is in flight. Carries the response, which the adapter hands to the
 * caller when this was the primary's and every attempt failed. No stack trace (it is a signal, not a
 * fault); the message has the status only.
 */
public final class StatusFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final boolean retryable;
    private final transient Object response;

    /**
     * @param status the HTTP status
     * @param retryable whether the next attempt should start at once
     * @param response the response, still open
     */
    public StatusFailure(int status, boolean retryable, Object response) {
        super("HTTP status " + status, null, false, false);
        this.status = status;
        this.retryable = retryable;
        this.response = response;
    }

    /** @return the HTTP status */
    public int status() {
        return status;
    }

    /** @return whether the next attempt should start at once */
    public boolean retryable() {
        return retryable;
    }

    /** @return the response, still open */
    public Object response() {
        return response;
    }
}

package io.github.hedge.grpc.internal;

import io.grpc.Metadata;
import io.grpc.Status;

/**
 * An attempt that ended with a non-OK status, with its trailers. A fresh instance per attempt
 * (the executor may attach others as suppressed); no stack trace, it is an outcome, not a bug.
 */
public final class AttemptFailed extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Status status;
    private final transient Metadata trailers;

    AttemptFailed(Status status, Metadata trailers) {
        super(
                status.getCode() + (status.getDescription() != null ? ": " + status.getDescription() : ""),
                status.getCause(),
                false,
                false);
        this.status = status;
        this.trailers = trailers;
    }

    public Status status() {
        return status;
    }

    public Metadata trailers() {
        return trailers;
    }
}

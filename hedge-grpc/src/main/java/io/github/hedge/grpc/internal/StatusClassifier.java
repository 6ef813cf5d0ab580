package io.github.hedge.grpc.internal;

import io.github.hedge.core.ErrorClassifier;
import io.grpc.Status;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * Maps an attempt's failure to the executor's decision: a status whose code is non-fatal starts the
 * next attempt; every other status, and any failure that is not a status (a local bug), ends the
 * call. Immutable.
 */
public final class StatusClassifier implements ErrorClassifier {
    private final Set<Status.Code> nonFatal;

    public StatusClassifier(Set<Status.Code> nonFatal) {
        this.nonFatal = nonFatal.isEmpty()
                ? Collections.unmodifiableSet(EnumSet.noneOf(Status.Code.class))
                : Collections.unmodifiableSet(EnumSet.copyOf(nonFatal));
    }

    public Set<Status.Code> nonFatalCodes() {
        return nonFatal;
    }

    @Override
    public Decision classify(Throwable error) {
        if (error instanceof AttemptFailed) {
            return nonFatal.contains(((AttemptFailed) error).status().getCode()) ? Decision.RETRYABLE : Decision.FATAL;
        }
        return Decision.FATAL;
    }
}

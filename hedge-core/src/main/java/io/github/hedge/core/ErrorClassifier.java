package io.github.hedge.core;

import java.util.Objects;
import java.util.Set;

/**
 * Decides what an attempt's failure means for the call. Thread-safe and fast: called on the
 * completion path.
 *
 * <ul>
 *   <li>{@link Decision#RETRYABLE}: the replica failed, another may succeed: the next attempt
 *       starts at once (budget and maxAttempts permitting) and the call fails only when no attempt
 *       is left in flight or startable.
 *   <li>{@link Decision#FATAL}: the request itself is bad (invalid, unauthorized): every replica
 *       would refuse it, so the call ends at once with this error and the other attempts are
 *       cancelled.
 * </ul>
 */
@FunctionalInterface
public interface ErrorClassifier {
    /** What a failure means. */
    enum Decision {
        /** try another attempt */
        RETRYABLE,
        /** end the call now */
        FATAL
    }

    /**
     * @param error the attempt's failure, unwrapped from {@link java.util.concurrent.CompletionException}
     * @return the decision
     */
    Decision classify(Throwable error);

    /**
     * The default: {@link Error}s (out of memory, stack overflow) are fatal, every exception is
     * retryable.
     *
     * @return the default classifier
     */
    static ErrorClassifier defaults() {
        return error -> error instanceof Error ? Decision.FATAL : Decision.RETRYABLE;
    }

    /**
     * Fatal for the given exception types and their subtypes (and for {@link Error}s), retryable
     * for the rest.
     *
     * @param fatalTypes exception types that mean "the request is bad"
     * @return the classifier
     */
    static ErrorClassifier fatalOn(Class<?>... fatalTypes) {
        for (Class<?> t : fatalTypes) {
            Objects.requireNonNull(t, "fatalTypes must not contain null");
            if (!Throwable.class.isAssignableFrom(t)) {
                throw new IllegalArgumentException("fatalTypes must be Throwable types, was " + t.getName());
            }
        }
        Set<Class<?>> types = Set.of(fatalTypes);
        return error -> {
            if (error instanceof Error) {
                return Decision.FATAL;
            }
            for (Class<?> t : types) {
                if (t.isInstance(error)) {
                    return Decision.FATAL;
                }
            }
            return Decision.RETRYABLE;
        };
    }
}

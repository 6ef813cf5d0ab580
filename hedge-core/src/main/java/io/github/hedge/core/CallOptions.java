package io.github.hedge.core;

import io.github.hedge.core.internal.Checks;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Per-call settings that override the executor's defaults. Immutable and thread-safe; build once
 * and reuse.
 *
 * <pre>{@code
 * CallOptions read = CallOptions.builder().idempotent(true).operation("getUser").build();
 * executor.executeAsync(read, ctx -> client.getUser(id));
 * }</pre>
 */
public final class CallOptions {
    private static final CallOptions DEFAULTS = new Builder().build();
    private static final CallOptions IDEMPOTENT = new Builder().idempotent(true).build();
    private static final CallOptions NON_IDEMPOTENT =
            new Builder().idempotent(false).build();

    private final Boolean idempotent;
    private final Duration deadline;
    private final String operation;
    private final Supplier<String> details;
    private final ErrorClassifier errorClassifier;

    private CallOptions(Builder b) {
        this.idempotent = b.idempotent;
        this.deadline = b.deadline;
        this.operation = b.operation;
        this.details = b.details;
        this.errorClassifier = b.errorClassifier;
    }

    /** @return options that take every default from the executor */
    public static CallOptions defaults() {
        return DEFAULTS;
    }

    /** @return options that declare the call idempotent: it may be hedged */
    public static CallOptions idempotent() {
        return IDEMPOTENT;
    }

    /** @return options that declare the call non-idempotent: it runs exactly once */
    public static CallOptions nonIdempotent() {
        return NON_IDEMPOTENT;
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /** @return whether the call declared itself idempotent, or {@code null} to use the executor's default */
    public Boolean declaredIdempotent() {
        return idempotent;
    }

    /** @return the overall deadline of the call, or {@code null} to use the executor's */
    public Duration deadline() {
        return deadline;
    }

    /** @return a low-cardinality label of the call, or {@code null} */
    public String operation() {
        return operation;
    }

    /** @return details for the slow-call log, or {@code null}; logged only when the user opts in */
    public Supplier<String> details() {
        return details;
    }

    /**
     * @return the classifier of this call's attempt failures, used instead of the executor's; or
     *     {@code null} to use the executor's ({@link HedgeConfig#errorClassifier()})
     */
    public ErrorClassifier errorClassifier() {
        return errorClassifier;
    }

    /** Builds {@link CallOptions}. Not thread-safe; {@link #build()} copies. */
    public static final class Builder {
        private Boolean idempotent;
        private Duration deadline;
        private String operation;
        private Supplier<String> details;
        private ErrorClassifier errorClassifier;

        private Builder() {}

        /**
         * @param idempotent whether the call may safely run more than once
         * @return this
         */
        public Builder idempotent(boolean idempotent) {
            this.idempotent = idempotent;
            return this;
        }

        /**
         * @param deadline the call's overall deadline; > 0
         * @return this
         */
        public Builder deadline(Duration deadline) {
            this.deadline = Checks.positive("deadline", deadline);
            return this;
        }

        /**
         * @param operation a low-cardinality label ("getUser"), shown in events and the slow-call
         *     log; never put user data here
         * @return this
         */
        public Builder operation(String operation) {
            this.operation = Checks.name("operation", operation);
            return this;
        }

        /**
         * @param details computed only if a slow-call log that opted in to details logs this call;
         *     may carry user data (a query with its values, say)
         * @return this
         */
        public Builder details(Supplier<String> details) {
            this.details = Checks.notNull("details", details);
            return this;
        }

        /**
         * Classifies this call's attempt failures instead of the executor's classifier. For an
         * adapter that knows its transport's errors (a driver's "invalid query" fails on every
         * replica) whatever classifier the user configured: it may decide the errors it knows and
         * hand the rest to {@code executor.config().errorClassifier()}.
         *
         * @param classifier the call's classifier
         * @return this
         */
        public Builder errorClassifier(ErrorClassifier classifier) {
            this.errorClassifier = Checks.notNull("errorClassifier", classifier);
            return this;
        }

        /** @return the options */
        public CallOptions build() {
            return new CallOptions(this);
        }
    }
}

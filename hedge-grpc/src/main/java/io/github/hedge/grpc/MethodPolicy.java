package io.github.hedge.grpc;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import java.util.Objects;

/**
 * How one method, or every method of a service, is hedged: overrides of the interceptor's {@link
 * HedgeConfig} defaults. Each setting left unset takes the default. Immutable and thread-safe.
 *
 * <pre>{@code
 * MethodPolicy reads = MethodPolicy.builder().maxAttempts(3).delay(DelayPolicy.percentile(0.9).build()).build();
 * MethodPolicy write = MethodPolicy.builder().idempotent(true).build(); // not marked in the .proto
 * MethodPolicy off = MethodPolicy.disabled();                          // never hedged, untouched
 * }</pre>
 */
public final class MethodPolicy {
    private static final MethodPolicy DEFAULTS = new Builder().build();
    private static final MethodPolicy DISABLED = new Builder().enabled(false).build();

    private final boolean enabled;
    private final Boolean idempotent;
    private final DelayPolicy delay;
    private final Integer maxAttempts;

    private MethodPolicy(Builder b) {
        this.enabled = b.enabled;
        this.idempotent = b.idempotent;
        this.delay = b.delay;
        this.maxAttempts = b.maxAttempts;
    }

    /** @return a policy that takes every setting from the interceptor's defaults */
    public static MethodPolicy defaults() {
        return DEFAULTS;
    }

    /** @return a policy that leaves the method untouched: its calls pass straight to the channel */
    public static MethodPolicy disabled() {
        return DISABLED;
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /** @return whether the interceptor handles the method at all */
    public boolean enabled() {
        return enabled;
    }

    /**
     * @return {@code true}/{@code false} to override what the method descriptor says ({@code
     *     isSafe()}/{@code isIdempotent()}, from the proto's {@code idempotency_level}), or {@code
     *     null} to follow the descriptor
     */
    public Boolean idempotent() {
        return idempotent;
    }

    /** @return the delay policy, or {@code null} for the default */
    public DelayPolicy delay() {
        return delay;
    }

    /** @return most attempts per call, or {@code null} for the default */
    public Integer maxAttempts() {
        return maxAttempts;
    }

    @Override
    public String toString() {
        return enabled
                ? "MethodPolicy{idempotent=" + idempotent + ", delay=" + delay + ", maxAttempts=" + maxAttempts + "}"
                : "MethodPolicy{disabled}";
    }

    /** Builds a {@link MethodPolicy}. Each setter validates at once. Not thread-safe; {@link #build()} copies. */
    public static final class Builder {
        private boolean enabled = true;
        private Boolean idempotent;
        private DelayPolicy delay;
        private Integer maxAttempts;

        private Builder() {}

        /**
         * @param enabled {@code false} to leave the method's calls untouched (never hedged, no
         *     metrics); default {@code true}
         * @return this
         */
        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        /**
         * @param idempotent whether the method may run more than once, overriding its descriptor:
         *     {@code true} hedges a method the .proto does not mark, {@code false} runs a marked one
         *     exactly once
         * @return this
         */
        public Builder idempotent(boolean idempotent) {
            this.idempotent = idempotent;
            return this;
        }

        /**
         * @param delay when to send the next attempt
         * @return this
         */
        public Builder delay(DelayPolicy delay) {
            this.delay = Objects.requireNonNull(delay, "delay must not be null");
            return this;
        }

        /**
         * @param maxAttempts most attempts per call, primary included, in [1, 16]
         * @return this
         */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1 || maxAttempts > HedgeConfig.MAX_ATTEMPTS_LIMIT) {
                throw new IllegalArgumentException(
                        "maxAttempts must be in [1, " + HedgeConfig.MAX_ATTEMPTS_LIMIT + "], was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** @return the policy */
        public MethodPolicy build() {
            return new MethodPolicy(this);
        }
    }
}

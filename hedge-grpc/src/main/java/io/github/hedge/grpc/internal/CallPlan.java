package io.github.hedge.grpc.internal;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;

/** How the calls of one method are run, resolved once per method. Immutable. */
public final class CallPlan {
    /** The method is not handled: calls pass straight through. */
    public static final CallPlan DISABLED = new CallPlan(null, false, 0, null, null);

    private final HedgedExecutor executor;
    private final boolean idempotent;
    private final int maxRequestBytes;
    private final TooLargeCount tooLarge;
    private final CallOptions options;
    private final WarmupLatency warmup;

    public CallPlan(
            HedgedExecutor executor,
            boolean idempotent,
            int maxRequestBytes,
            TooLargeCount tooLarge,
            WarmupLatency warmup) {
        this.executor = executor;
        this.warmup = warmup;
        this.idempotent = idempotent;
        this.maxRequestBytes = maxRequestBytes;
        this.tooLarge = tooLarge;
        this.options = idempotent ? CallOptions.idempotent() : CallOptions.nonIdempotent();
    }

    public HedgedExecutor executor() {
        return executor;
    }

    public boolean idempotent() {
        return idempotent;
    }

    public int maxRequestBytes() {
        return maxRequestBytes;
    }

    /** @return this method's count of requests too large to hedge, on this interceptor */
    public TooLargeCount tooLarge() {
        return tooLarge;
    }

    /** @return where successful attempts are sampled for the warm-up delay, or {@code null} if the method has none */
    public WarmupLatency warmup() {
        return warmup;
    }

    /** @return the executor options of a call without its own deadline */
    public CallOptions options() {
        return options;
    }
}

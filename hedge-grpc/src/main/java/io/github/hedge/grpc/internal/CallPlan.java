package io.github.hedge.grpc.internal;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;

/** How the calls of one method are run, resolved once per method. Immutable. */
public final class CallPlan {
    /** The method is not handled: calls pass straight through. */
    public static final CallPlan DISABLED = new CallPlan(null, false, 0, null);

    private final HedgedExecutor executor;
    private final boolean idempotent;
    private final int maxRequestBytes;
    private final TooLargeCount tooLarge;
    private final CallOptions options;

    public CallPlan(HedgedExecutor executor, boolean idempotent, int maxRequestBytes, TooLargeCount tooLarge) {
        this.executor = executor;
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

    /** @return the executor options of a call without its own deadline */
    public CallOptions options() {
        return options;
    }
}

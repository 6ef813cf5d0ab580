package io.github.hedge.grpc.internal;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import java.util.concurrent.atomic.LongAdder;

/** How the calls of one method are run, resolved once per method. Immutable. */
public final class CallPlan {
    /** The method is not handled: calls pass straight through. */
    public static final CallPlan DISABLED = new CallPlan(null, false, 0, null);

    private final HedgedExecutor executor;
    private final boolean idempotent;
    private final int maxRequestBytes;
    private final LongAdder tooLarge;
    private final CallOptions options;

    public CallPlan(HedgedExecutor executor, boolean idempotent, int maxRequestBytes, LongAdder tooLarge) {
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

    public LongAdder tooLarge() {
        return tooLarge;
    }

    /** @return the executor options of a call without its own deadline */
    public CallOptions options() {
        return options;
    }
}

package io.github.hedge.grpc;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Server-side hedge throttling, after Pegasus' backup-request throttling: a request marked as a hedge
 * ({@link HedgeHeaders#ATTEMPT} &gt; 1, or, without it, the standard {@link
 * HedgeHeaders#PREVIOUS_RPC_ATTEMPTS} &gt; 0 that grpc-java's native hedging sends) that arrives while {@code maxConcurrentHedges} hedges are
 * already being served is <b>shed by not answering it</b>: the handler never sees it and no status is
 * sent, so the client does not treat it as a failure and keeps waiting for its primary; the client
 * cancels the shed stream when the primary answers (or the deadline passes), and only then does it
 * end here. Primaries are never shed. Shed hedges are counted ({@link #shedCount()}).
 *
 * <p>A shed stream holds an HTTP/2 stream slot until the client cancels it: pair it with the client
 * interceptor, which cancels every losing attempt, and with call deadlines.
 *
 * <pre>{@code
 * HedgeSheddingServerInterceptor shedding = HedgeSheddingServerInterceptor.maxConcurrentHedges(32);
 * Server server = NettyServerBuilder.forPort(port).addService(ServerInterceptors.intercept(service, shedding)).build();
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class HedgeSheddingServerInterceptor implements ServerInterceptor {
    private final int limit;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final LongAdder shed = new LongAdder();
    private final LongAdder admitted = new LongAdder();

    private HedgeSheddingServerInterceptor(int limit) {
        this.limit = limit;
    }

    /**
     * @param limit hedges served at once before further hedges are shed, &gt;= 0 (0 sheds every hedge)
     * @return the interceptor
     */
    public static HedgeSheddingServerInterceptor maxConcurrentHedges(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("maxConcurrentHedges must be >= 0, was " + limit);
        }
        return new HedgeSheddingServerInterceptor(limit);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
            ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
        if (!HedgeHeaders.isHedge(headers)) {
            return next.startCall(call, headers);
        }
        if (inFlight.incrementAndGet() > limit) {
            inFlight.decrementAndGet();
            shed.increment();
            return new ServerCall.Listener<ReqT>() {}; // no answer: the client's cancel ends it
        }
        admitted.increment();
        AtomicBoolean done = new AtomicBoolean();
        Runnable release = () -> {
            if (done.compareAndSet(false, true)) {
                inFlight.decrementAndGet();
            }
        };
        ServerCall.Listener<ReqT> delegate;
        try {
            delegate = next.startCall(call, headers);
        } catch (RuntimeException | Error e) {
            release.run();
            throw e;
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT>(delegate) {
            @Override
            public void onComplete() {
                release.run();
                super.onComplete();
            }

            @Override
            public void onCancel() {
                release.run();
                super.onCancel();
            }
        };
    }

    /** @return the configured limit of concurrent hedges */
    public int limit() {
        return limit;
    }

    /** @return hedges being served now */
    public int hedgesInFlight() {
        return inFlight.get();
    }

    /** @return hedges shed (not answered) since creation */
    public long shedCount() {
        return shed.sum();
    }

    /** @return hedges admitted since creation */
    public long admittedCount() {
        return admitted.sum();
    }

    @Override
    public String toString() {
        return "HedgeSheddingServerInterceptor{limit=" + limit + ", inFlight=" + inFlight.get() + ", shed=" + shed.sum()
                + "}";
    }
}

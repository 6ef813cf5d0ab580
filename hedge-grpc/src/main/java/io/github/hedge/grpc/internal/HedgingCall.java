package io.github.hedge.grpc.internal;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.DeadlineExceededException;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientStreamTracer;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.KnownLength;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.SynchronizationContext;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One unary call as the application sees it, run as one or more attempts by the method's executor.
 *
 * <p>The application's {@code start}, {@code request}, {@code sendMessage} and {@code halfClose}
 * are recorded; at {@code halfClose} (a unary request is complete) the executor starts attempt 1.
 * Each attempt is a real {@link ClientCall} on the next channel, started in the caller's {@link
 * Context} (so its deadline and cancellation reach every attempt) and buffering its own response;
 * an attempt succeeds only when it closes with OK. The winner's headers, message and trailers are
 * then delivered to the application's listener on a {@link SynchronizationContext}, honouring the
 * application's {@code request(n)}: the message waits until it is requested, the close follows it.
 */
public final class HedgingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
    private static final Logger LOG = LoggerFactory.getLogger(HedgingCall.class);
    private static final Metadata.Key<String> PUSHBACK =
            Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

    private final CallPlan plan;
    private final MethodDescriptor<ReqT, RespT> method;
    private final CallOptions callOptions;
    private final Channel next;
    private final Context context;
    private final SynchronizationContext delivery;

    // application side; touched only by the application's thread until launch, then under delivery
    private Listener<RespT> listener;
    private Metadata headers;
    private ReqT message;
    private int messages;
    private boolean compression;
    private boolean compressionSet;

    private final Object lock = new Object();
    private int demand; // guarded by lock
    private boolean launched; // guarded by lock
    private boolean cancelledEarly; // guarded by lock
    private ClientCall<ReqT, RespT> direct; // guarded by lock: the untouched call of a too-large request
    private CompletableFuture<Result<RespT>> future; // guarded by lock

    // delivery side: only inside the delivery context
    private RespT pendingMessage;
    private Status pendingStatus;
    private Metadata pendingTrailers;
    private volatile boolean closed;
    private volatile Attributes attributes = Attributes.EMPTY;

    public HedgingCall(CallPlan plan, MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
        this.plan = plan;
        this.method = method;
        this.callOptions = callOptions;
        this.next = next;
        this.context = Context.current();
        this.delivery = new SynchronizationContext((t, e) -> LOG.warn("hedge: a call listener failed", e));
    }

    @Override
    public void start(Listener<RespT> responseListener, Metadata headers) {
        if (this.listener != null) {
            throw new IllegalStateException("already started");
        }
        this.listener = java.util.Objects.requireNonNull(responseListener, "responseListener");
        Metadata copy = new Metadata();
        copy.merge(headers);
        this.headers = copy;
    }

    @Override
    public void request(int numMessages) {
        if (numMessages < 0) {
            throw new IllegalArgumentException("numMessages must be >= 0, was " + numMessages);
        }
        ClientCall<ReqT, RespT> d;
        synchronized (lock) {
            d = direct;
            if (d == null) {
                demand = (int) Math.min(Integer.MAX_VALUE, (long) demand + numMessages);
            }
        }
        if (d != null) {
            d.request(numMessages);
        } else {
            deliver(this::drain);
        }
    }

    @Override
    public void sendMessage(ReqT message) {
        if (listener == null) {
            throw new IllegalStateException("not started");
        }
        this.message = message;
        messages++;
    }

    @Override
    public void setMessageCompression(boolean enabled) {
        this.compression = enabled;
        this.compressionSet = true;
    }

    @Override
    public boolean isReady() {
        ClientCall<ReqT, RespT> d;
        synchronized (lock) {
            d = direct;
        }
        return d != null ? d.isReady() : !closed;
    }

    @Override
    public Attributes getAttributes() {
        ClientCall<ReqT, RespT> d;
        synchronized (lock) {
            d = direct;
        }
        return d != null ? d.getAttributes() : attributes;
    }

    @Override
    public void halfClose() {
        if (listener == null) {
            throw new IllegalStateException("not started");
        }
        synchronized (lock) {
            if (launched || cancelledEarly) {
                return;
            }
            launched = true;
        }
        if (messages != 1) {
            // not a unary request: let the real call report it, exactly as without the interceptor
            launchDirect();
            return;
        }
        if (plan.idempotent() && tooLarge()) {
            if (plan.tooLarge().record()) {
                logTooLarge();
            }
            launchDirect();
            return;
        }
        io.github.hedge.core.CallOptions options = plan.options();
        Deadline deadline = effectiveDeadline();
        if (deadline != null) {
            long nanos = deadline.timeRemaining(TimeUnit.NANOSECONDS);
            if (nanos <= 0) {
                launchDirect(); // grpc fails it with DEADLINE_EXCEEDED as usual
                return;
            }
            options = io.github.hedge.core.CallOptions.builder()
                    .idempotent(plan.idempotent())
                    .deadline(Duration.ofNanos(nanos))
                    .build();
        }
        CompletableFuture<Result<RespT>> f = plan.executor().executeAsync(options, this::startAttempt);
        boolean cancelNow;
        synchronized (lock) {
            future = f;
            cancelNow = cancelledEarly;
        }
        if (cancelNow) {
            f.cancel(false);
        }
        // the caller's Context cancels every attempt through grpc itself (they are created in it);
        // this also ends the call while no attempt is in flight (waiting out a pushback, say)
        Context.CancellationListener onContextCancel = c -> {
            Throwable cause = c.cancellationCause();
            if (cause == null || c.getDeadline() == null || !c.getDeadline().isExpired()) {
                cancel("io.grpc.Context was cancelled", cause);
            }
        };
        context.addListener(onContextCancel, Runnable::run);
        f.whenComplete((result, error) -> {
            context.removeListener(onContextCancel);
            deliver(() -> settle(result, error));
        });
    }

    @Override
    public void cancel(String message, Throwable cause) {
        if (message == null && cause == null) {
            cause = new CancellationException("Cancelled without a message or cause");
        }
        ClientCall<ReqT, RespT> d;
        CompletableFuture<Result<RespT>> f;
        synchronized (lock) {
            d = direct;
            f = future;
            if (d == null && f == null) {
                cancelledEarly = true;
            }
        }
        if (d != null) {
            d.cancel(message, cause);
            return;
        }
        Status status = Status.CANCELLED;
        status = message != null ? status.withDescription(message) : status.withDescription("Call cancelled");
        if (cause != null) {
            status = status.withCause(cause);
        }
        Status s = status;
        deliver(() -> closeOnce(s, new Metadata()));
        if (f != null) {
            f.cancel(false); // cancels every attempt (ClientCall.cancel on each)
        }
    }

    // ------------------------------------------------------------------ attempts

    private CompletionStage<Result<RespT>> startAttempt(AttemptContext ctx) {
        Attempt a = new Attempt(ctx);
        CallOptions opts =
                callOptions.withOption(Keys.TRIED_TARGETS, ctx.triedTargets()).withStreamTracerFactory(a.tracerFactory);
        Metadata h = new Metadata();
        h.merge(headers);
        if (ctx.isHedge()) {
            h.put(io.github.hedge.grpc.HedgeHeaders.ATTEMPT, Integer.toString(ctx.attemptNumber()));
            h.discardAll(io.github.hedge.grpc.HedgeHeaders.PREVIOUS_RPC_ATTEMPTS);
            h.put(io.github.hedge.grpc.HedgeHeaders.PREVIOUS_RPC_ATTEMPTS, Integer.toString(ctx.attemptNumber() - 1));
        }
        Context previous = context.attach();
        ClientCall<ReqT, RespT> call;
        try {
            call = next.newCall(method, opts);
        } finally {
            context.detach(previous);
        }
        a.call = call;
        ctx.onCancel(a::cancel);
        synchronized (a) {
            if (!a.cancelled) {
                a.started = true;
                call.start(a, h);
                call.request(1);
                if (compressionSet) {
                    call.setMessageCompression(compression);
                }
                call.sendMessage(message);
                call.halfClose();
            }
        }
        return a.result;
    }

    /** One attempt: its listener, its stream tracer factory (to learn the backend), its outcome. */
    private final class Attempt extends ClientCall.Listener<RespT> {
        final AttemptContext ctx;
        final CompletableFuture<Result<RespT>> result = new CompletableFuture<>();
        ClientCall<ReqT, RespT> call;
        boolean started; // guarded by this
        boolean cancelled; // guarded by this
        volatile Metadata responseHeaders;
        volatile RespT response;
        volatile String target; // the backend, once the transport created the stream

        Attempt(AttemptContext ctx) {
            this.ctx = ctx;
        }

        void cancel() {
            boolean doCancel;
            synchronized (this) {
                cancelled = true;
                doCancel = started;
            }
            if (doCancel) {
                call.cancel("hedge: attempt " + ctx.attemptNumber() + " no longer needed", null);
            }
        }

        @Override
        public void onHeaders(Metadata headers) {
            responseHeaders = headers; // never a commit: only a successful close is
        }

        @Override
        public void onMessage(RespT message) {
            if (response == null) {
                response = message;
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            if (status.isOk()) {
                Attributes attrs = Attributes.EMPTY;
                try {
                    attrs = call.getAttributes();
                } catch (RuntimeException ignored) {
                    // some channels do not expose attributes after close
                }
                result.complete(new Result<>(responseHeaders, response, trailers, attrs));
                return;
            }
            String pushback = trailers.get(PUSHBACK);
            if (pushback != null) {
                long ms;
                try {
                    ms = Long.parseLong(pushback.trim());
                } catch (NumberFormatException e) {
                    ms = -1; // gRFC A6: an unparseable value means "do not retry"
                }
                if (ms < 0) {
                    ctx.stopFurtherAttempts();
                } else {
                    ctx.pushback(Duration.ofMillis(ms));
                }
            }
            result.completeExceptionally(new AttemptFailed(status, trailers));
        }

        /** Learns the backend when the transport creates the stream, with any balancer policy. */
        final ClientStreamTracer.Factory tracerFactory = new ClientStreamTracer.Factory() {
            @Override
            public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                return new ClientStreamTracer() {
                    @Override
                    public void streamCreated(Attributes transportAttrs, Metadata headers) {
                        SocketAddress remote = transportAttrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                        if (remote != null) {
                            String t = Addresses.of(remote);
                            target = t;
                            ctx.reportTarget(t);
                        }
                    }
                };
            }
        };
    }

    // ------------------------------------------------------------------ delivery (in `delivery`)

    private void settle(Result<RespT> result, Throwable error) {
        if (closed) {
            return;
        }
        if (error == null) {
            attributes = result.attributes;
            try {
                listener.onHeaders(result.headers != null ? result.headers : new Metadata());
            } catch (Throwable t) {
                listenerFailed(t);
                return;
            }
            pendingMessage = result.message;
            pendingStatus = Status.OK;
            pendingTrailers = result.trailers;
            drain();
            return;
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof AttemptFailed) {
            AttemptFailed f = (AttemptFailed) cause;
            closeOnce(f.status(), f.trailers());
        } else if (cause instanceof DeadlineExceededException) {
            closeOnce(Status.DEADLINE_EXCEEDED.withDescription("hedge: " + cause.getMessage()), new Metadata());
        } else if (cause instanceof CancellationException) {
            closeOnce(Status.CANCELLED.withDescription("Call cancelled"), new Metadata());
        } else if (cause instanceof StatusException || cause instanceof StatusRuntimeException) {
            Metadata t = Status.trailersFromThrowable(cause);
            closeOnce(Status.fromThrowable(cause), t != null ? t : new Metadata());
        } else {
            closeOnce(Status.INTERNAL.withDescription("hedge: attempt failed").withCause(cause), new Metadata());
        }
    }

    private void drain() {
        if (closed || pendingStatus == null) {
            return;
        }
        if (pendingMessage != null) {
            synchronized (lock) {
                if (demand == 0) {
                    return;
                }
                demand--;
            }
            RespT m = pendingMessage;
            pendingMessage = null;
            try {
                listener.onMessage(m);
            } catch (Throwable t) {
                listenerFailed(t);
                return;
            }
        }
        closeOnce(pendingStatus, pendingTrailers);
    }

    private void listenerFailed(Throwable t) {
        pendingMessage = null;
        closeOnce(Status.CANCELLED.withDescription("Failed to read message.").withCause(t), new Metadata());
    }

    private void closeOnce(Status status, Metadata trailers) {
        if (closed) {
            return;
        }
        closed = true;
        pendingMessage = null;
        listener.onClose(status, trailers);
    }

    // ------------------------------------------------------------------ helpers

    /**
     * Runs {@code task} in the delivery context, on the call's executor when it has one: a blocking
     * stub's {@code ThreadlessExecutor} only wakes its caller for work it is given, so a close that
     * comes from a timer thread (deadline) must go through it, as grpc's own callbacks do.
     */
    private void deliver(Runnable task) {
        delivery.executeLater(task);
        java.util.concurrent.Executor executor = callOptions.getExecutor();
        if (executor == null) {
            delivery.drain();
            return;
        }
        try {
            executor.execute(delivery::drain);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            delivery.drain();
        }
    }

    private void launchDirect() {
        Context previous = context.attach();
        ClientCall<ReqT, RespT> call;
        try {
            call = next.newCall(method, callOptions);
        } finally {
            context.detach(previous);
        }
        int d;
        synchronized (lock) {
            direct = call;
            d = demand;
            demand = 0;
        }
        call.start(listener, headers);
        if (d > 0) {
            call.request(d);
        }
        if (compressionSet) {
            call.setMessageCompression(compression);
        }
        if (messages >= 1) {
            call.sendMessage(message);
        }
        call.halfClose();
    }

    private Deadline effectiveDeadline() {
        Deadline a = callOptions.getDeadline();
        Deadline b = context.getDeadline();
        if (a == null) {
            return b;
        }
        return b == null ? a : a.minimum(b);
    }

    private boolean tooLarge() {
        try (InputStream in = method.getRequestMarshaller().stream(message)) {
            return longerThan(in, plan.maxRequestBytes());
        } catch (IOException | RuntimeException e) {
            return true; // cannot tell: do not keep it
        }
    }

    /**
     * Whether a serialized request holds more than {@code limit} bytes. A {@link KnownLength} stream
     * (protobuf's) says so at once; any other is skipped through, at most {@code limit + 1} bytes:
     * a {@code ByteArrayInputStream} skips without copying or allocating, and {@link
     * InputStream#skip}'s default reads through a buffer of at most 2 KiB.
     *
     * @param in the serialized request, consumed
     * @param limit bytes, at least 0
     * @return true when the stream holds more than {@code limit} bytes
     * @throws IOException when the stream fails
     */
    static boolean longerThan(InputStream in, long limit) throws IOException {
        if (in instanceof KnownLength) {
            return in.available() > limit;
        }
        long n = 0;
        while (n <= limit) {
            long skipped = in.skip(limit + 1 - n);
            if (skipped > 0) {
                n += skipped;
            } else if (in.read() == -1) {
                return false; // skip may return 0 before the end: one read tells
            } else {
                n++;
            }
        }
        return true;
    }

    private void logTooLarge() {
        LOG.info(
                "hedge: a request of {} was larger than {} bytes and was not hedged"
                        + " (counted in HedgingClientInterceptor.requestsTooLarge(); logged once per method)",
                method.getFullMethodName(),
                plan.maxRequestBytes());
    }

    /** The winner's response. */
    static final class Result<RespT> {
        final Metadata headers;
        final RespT message;
        final Metadata trailers;
        final Attributes attributes;

        Result(Metadata headers, RespT message, Metadata trailers, Attributes attributes) {
            this.headers = headers;
            this.message = message;
            this.trailers = trailers;
            this.attributes = attributes;
        }
    }
}

package io.github.hedge.grpc;

import io.github.hedge.grpc.test.EchoGrpc;
import io.github.hedge.grpc.test.EchoReply;
import io.github.hedge.grpc.test.EchoRequest;
import io.grpc.EquivalentAddressGroup;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Real grpc-netty backends on 127.0.0.1 serving the test {@code Echo} service. What each backend does
 * with a request is set per test ({@link #behave}); every execution, cancellation and the hedge
 * marker it carried are recorded. A "hedgetest:///name" target resolves to all of them.
 */
final class Backends implements AutoCloseable {
    /** What a backend does with one request. */
    static final class Action {
        final long delayMillis;
        final Status status; // null = OK
        final Metadata trailers;

        private Action(long delayMillis, Status status, Metadata trailers) {
            this.delayMillis = delayMillis;
            this.status = status;
            this.trailers = trailers;
        }

        static Action reply(long delayMillis) {
            return new Action(delayMillis, null, null);
        }

        static Action fail(long delayMillis, Status status) {
            return new Action(delayMillis, status, new Metadata());
        }

        static Action fail(long delayMillis, Status status, Metadata trailers) {
            return new Action(delayMillis, status, trailers);
        }
    }

    /** Decides the action for a request on one backend. */
    interface Behaviour {
        Action act(int backend, String method, EchoRequest request, int attempt);
    }

    /** One execution a backend saw. */
    static final class Execution {
        final int backend;
        final String method;
        final String text;
        final int attempt;
        final long startNanos;
        volatile boolean cancelled;
        volatile boolean answered;

        Execution(int backend, String method, String text, int attempt) {
            this.backend = backend;
            this.method = method;
            this.text = text;
            this.attempt = attempt;
            this.startNanos = System.nanoTime();
        }

        @Override
        public String toString() {
            return method + "(" + text + ")@b" + backend + "#" + attempt + (cancelled ? " cancelled" : "")
                    + (answered ? " answered" : "");
        }
    }

    private static final Map<String, List<InetSocketAddress>> TARGETS = new ConcurrentHashMap<>();
    private static final AtomicInteger IDS = new AtomicInteger();

    static {
        NameResolverRegistry.getDefaultRegistry().register(new NameResolverProvider() {
            @Override
            protected boolean isAvailable() {
                return true;
            }

            @Override
            protected int priority() {
                return 5;
            }

            @Override
            public String getDefaultScheme() {
                return "hedgetest";
            }

            @Override
            public NameResolver newNameResolver(URI uri, NameResolver.Args args) {
                if (!"hedgetest".equals(uri.getScheme())) {
                    return null;
                }
                List<InetSocketAddress> addrs = TARGETS.get(uri.getPath().substring(1));
                return new NameResolver() {
                    @Override
                    public String getServiceAuthority() {
                        return "backends";
                    }

                    @Override
                    public void start(Listener2 listener) {
                        List<EquivalentAddressGroup> groups = new ArrayList<>();
                        for (InetSocketAddress a : addrs) {
                            groups.add(new EquivalentAddressGroup(a));
                        }
                        listener.onResult(ResolutionResult.newBuilder()
                                .setAddressesOrError(io.grpc.StatusOr.fromValue(groups))
                                .build());
                    }

                    @Override
                    public void shutdown() {}
                };
            }
        });
    }

    final List<Server> servers = new ArrayList<>();
    final List<InetSocketAddress> addresses = new ArrayList<>();
    final List<Execution> executions = new CopyOnWriteArrayList<>();
    final String target;
    private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "backends-timer");
        t.setDaemon(true);
        return t;
    });
    private volatile Behaviour behaviour = (b, m, r, a) -> Action.reply(0);
    private final boolean[] earlyHeaders;

    Backends(int n, ServerInterceptor... interceptors) throws IOException {
        earlyHeaders = new boolean[n];
        for (int i = 0; i < n; i++) {
            int index = i;
            ServerInterceptor early = new ServerInterceptor() {
                @Override
                public <Q, R> ServerCall.Listener<Q> interceptCall(
                        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                    if (!earlyHeaders[index]) {
                        return next.startCall(call, headers);
                    }
                    call.sendHeaders(new Metadata());
                    return next.startCall(
                            new ForwardingServerCall.SimpleForwardingServerCall<Q, R>(call) {
                                @Override
                                public void sendHeaders(Metadata h) {
                                    // already sent
                                }
                            },
                            headers);
                }
            };
            List<ServerInterceptor> all = new ArrayList<>(List.of(interceptors));
            all.add(early);
            all.add(ATTEMPT_READER);
            Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(ServerInterceptors.intercept(new Service(i), all))
                    .build()
                    .start();
            servers.add(s);
            addresses.add(new InetSocketAddress("127.0.0.1", s.getPort()));
        }
        target = "backends" + IDS.incrementAndGet();
        TARGETS.put(target, List.copyOf(addresses));
    }

    String target() {
        return "hedgetest:///" + target;
    }

    Behaviour behaviour() {
        return behaviour;
    }

    void behave(Behaviour b) {
        this.behaviour = b;
    }

    void earlyHeaders(int backend, boolean on) {
        earlyHeaders[backend] = on;
    }

    void reset() {
        behaviour = (b, m, r, a) -> Action.reply(0);
        java.util.Arrays.fill(earlyHeaders, false);
        executions.clear();
    }

    List<Execution> executions(String text) {
        List<Execution> l = new ArrayList<>();
        for (Execution e : executions) {
            if (e.text.equals(text)) {
                l.add(e);
            }
        }
        return l;
    }

    String address(int backend) {
        return "127.0.0.1:" + addresses.get(backend).getPort();
    }

    /**
     * Shuts the test's channels down at once and waits for each (5 s at most).
     *
     * @param channels the channels a test opened
     */
    static void shutdown(List<io.grpc.ManagedChannel> channels) throws InterruptedException {
        for (io.grpc.ManagedChannel c : channels) {
            c.shutdownNow();
        }
        for (io.grpc.ManagedChannel c : channels) {
            c.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Override
    public void close() {
        for (Server s : servers) {
            s.shutdownNow();
        }
        try {
            for (Server s : servers) {
                s.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        timer.shutdownNow();
        TARGETS.remove(target);
    }

    private final class Service extends EchoGrpc.EchoImplBase {
        private final int index;

        Service(int index) {
            this.index = index;
        }

        private void handle(String method, EchoRequest request, StreamObserver<EchoReply> out) {
            int attempt = ATTEMPT.get();
            Execution e = new Execution(index, method, request.getText(), attempt);
            executions.add(e);
            ServerCallStreamObserver<EchoReply> so = (ServerCallStreamObserver<EchoReply>) out;
            so.setOnCancelHandler(() -> e.cancelled = true);
            Action a = behaviour.act(index, method, request, attempt);
            Runnable answer = () -> {
                if (e.cancelled) {
                    return;
                }
                e.answered = true;
                if (a.status != null) {
                    so.onError(a.status.asRuntimeException(a.trailers));
                } else {
                    so.onNext(EchoReply.newBuilder()
                            .setText(request.getText())
                            .setBackend("b" + index)
                            .setAttempt(attempt)
                            .build());
                    so.onCompleted();
                }
            };
            if (a.delayMillis <= 0) {
                answer.run();
            } else {
                timer.schedule(answer, a.delayMillis, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public void get(EchoRequest request, StreamObserver<EchoReply> out) {
            handle("Get", request, out);
        }

        @Override
        public void put(EchoRequest request, StreamObserver<EchoReply> out) {
            handle("Put", request, out);
        }

        @Override
        public void append(EchoRequest request, StreamObserver<EchoReply> out) {
            handle("Append", request, out);
        }

        @Override
        public void stream(EchoRequest request, StreamObserver<EchoReply> out) {
            handle("Stream", request, out);
        }
    }

    private static final io.grpc.Context.Key<Integer> ATTEMPT_CTX = io.grpc.Context.key("attempt");

    private static final class AttemptHolder {
        int get() {
            Integer v = ATTEMPT_CTX.get();
            return v == null ? 1 : v;
        }
    }

    private static final AttemptHolder ATTEMPT = new AttemptHolder();

    /** Puts the hedge marker's attempt number into the grpc Context the handler sees. */
    static final ServerInterceptor ATTEMPT_READER = new ServerInterceptor() {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            io.grpc.Context ctx = io.grpc.Context.current().withValue(ATTEMPT_CTX, HedgeHeaders.attemptNumber(headers));
            return io.grpc.Contexts.interceptCall(ctx, call, headers, next);
        }
    };
}

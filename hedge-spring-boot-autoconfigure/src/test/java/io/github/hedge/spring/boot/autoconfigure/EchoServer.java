package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.grpc.HedgeHeaders;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.EquivalentAddressGroup;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.StatusOr;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToLongFunction;

/**
 * A real grpc-netty server on 127.0.0.1 with three unary string methods and no .proto: {@code
 * test.Echo/Read} answers a primary after {@code primaryDelayMs} and a hedge at once (replying
 * "attempt N"); {@code test.Echo/Write} counts its invocations and answers after 100 ms; {@code
 * test.Echo/Get} answers every attempt after {@link #getDelayMs} of its request (replying "NAME
 * attempt N") and records each execution, whether it answered and whether the client cancelled it.
 * {@link #target} names several servers as one channel target, one backend each.
 */
final class EchoServer implements AutoCloseable {
    static final MethodDescriptor<String, String> READ = method("test.Echo/Read");
    static final MethodDescriptor<String, String> WRITE = method("test.Echo/Write");
    static final MethodDescriptor<String, String> GET = method("test.Echo/Get");
    private static final Context.Key<Integer> ATTEMPT = Context.key("attempt");
    private static final String SCHEME = "echotest";
    private static final Map<String, List<InetSocketAddress>> TARGETS = new ConcurrentHashMap<>();
    private static final AtomicInteger TARGET_IDS = new AtomicInteger();

    static {
        // priority below DNS's 5: the default scheme of targets without one stays dns
        NameResolverRegistry.getDefaultRegistry().register(new NameResolverProvider() {
            @Override
            protected boolean isAvailable() {
                return true;
            }

            @Override
            protected int priority() {
                return 4;
            }

            @Override
            public String getDefaultScheme() {
                return SCHEME;
            }

            @Override
            public NameResolver newNameResolver(URI uri, NameResolver.Args args) {
                if (!SCHEME.equals(uri.getScheme())) {
                    return null;
                }
                List<InetSocketAddress> addresses = TARGETS.get(uri.getPath().substring(1));
                return new NameResolver() {
                    @Override
                    public String getServiceAuthority() {
                        return "echo";
                    }

                    @Override
                    public void start(Listener2 listener) {
                        List<EquivalentAddressGroup> groups = new ArrayList<>();
                        for (InetSocketAddress a : addresses) {
                            groups.add(new EquivalentAddressGroup(a));
                        }
                        listener.onResult(ResolutionResult.newBuilder()
                                .setAddressesOrError(StatusOr.fromValue(groups))
                                .build());
                    }

                    @Override
                    public void shutdown() {}
                };
            }
        });
    }

    /** One execution of {@code test.Echo/Get} on this server. */
    static final class Execution {
        final String request;
        final int attempt;
        volatile boolean answered;
        volatile boolean cancelled;

        Execution(String request, int attempt) {
            this.request = request;
            this.attempt = attempt;
        }

        @Override
        public String toString() {
            return request + "#" + attempt + (answered ? " answered" : "") + (cancelled ? " cancelled" : "");
        }
    }

    final String name;
    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger writes = new AtomicInteger();
    final List<Execution> gets = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final Server server;
    volatile long primaryDelayMs = 2_000;
    /** How long {@code test.Echo/Get} takes to answer a request. */
    volatile ToLongFunction<String> getDelayMs = request -> 0;

    EchoServer() throws IOException {
        this("echo");
    }

    EchoServer(String name) throws IOException {
        this.name = name;
        ServerInterceptor attempt = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                return Contexts.interceptCall(
                        Context.current().withValue(ATTEMPT, HedgeHeaders.attemptNumber(headers)), call, headers, next);
            }
        };
        ServerServiceDefinition service = ServerServiceDefinition.builder("test.Echo")
                .addMethod(READ, ServerCalls.asyncUnaryCall((request, response) -> {
                    reads.incrementAndGet();
                    int n = ATTEMPT.get();
                    long delay = n == 1 ? primaryDelayMs : 0;
                    scheduler.schedule(
                            () -> {
                                response.onNext("attempt " + n);
                                response.onCompleted();
                            },
                            delay,
                            TimeUnit.MILLISECONDS);
                }))
                .addMethod(GET, ServerCalls.asyncUnaryCall((request, response) -> {
                    Execution e = new Execution(request, ATTEMPT.get());
                    gets.add(e);
                    ServerCallStreamObserver<String> call = (ServerCallStreamObserver<String>) response;
                    call.setOnCancelHandler(() -> e.cancelled = true);
                    scheduler.schedule(
                            () -> {
                                if (e.cancelled) {
                                    return;
                                }
                                e.answered = true;
                                call.onNext(this.name + " attempt " + e.attempt);
                                call.onCompleted();
                            },
                            getDelayMs.applyAsLong(request),
                            TimeUnit.MILLISECONDS);
                }))
                .addMethod(WRITE, ServerCalls.asyncUnaryCall((request, response) -> {
                    writes.incrementAndGet();
                    scheduler.schedule(
                            () -> {
                                response.onNext("written " + request);
                                response.onCompleted();
                            },
                            100,
                            TimeUnit.MILLISECONDS);
                }))
                .build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(io.grpc.ServerInterceptors.intercept(service, attempt))
                .build()
                .start();
    }

    int port() {
        return server.getPort();
    }

    /**
     * @param servers the backends
     * @return a channel target that resolves to every one of them
     */
    static String target(EchoServer... servers) {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (EchoServer s : servers) {
            addresses.add(new InetSocketAddress("127.0.0.1", s.port()));
        }
        String id = "backends" + TARGET_IDS.incrementAndGet();
        TARGETS.put(id, List.copyOf(addresses));
        return SCHEME + ":///" + id;
    }

    static String call(Channel channel, MethodDescriptor<String, String> method, String request) {
        return ClientCalls.blockingUnaryCall(
                channel, method, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), request);
    }

    private static MethodDescriptor<String, String> method(String fullName) {
        MethodDescriptor.Marshaller<String> utf8 = new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(String value) {
                return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
            }

            @Override
            public String parse(InputStream stream) {
                try {
                    return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
        return MethodDescriptor.<String, String>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(fullName)
                .setRequestMarshaller(utf8)
                .setResponseMarshaller(utf8)
                .build();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        scheduler.shutdownNow();
    }
}

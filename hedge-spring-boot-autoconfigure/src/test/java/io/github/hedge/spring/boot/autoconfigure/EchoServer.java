package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.grpc.HedgeHeaders;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real grpc-netty server on 127.0.0.1 with two unary string methods and no .proto: {@code
 * test.Echo/Read} answers a primary after {@code primaryDelayMs} and a hedge at once (replying
 * "attempt N"); {@code test.Echo/Write} counts its invocations and answers after 100 ms.
 */
final class EchoServer implements AutoCloseable {
    static final MethodDescriptor<String, String> READ = method("test.Echo/Read");
    static final MethodDescriptor<String, String> WRITE = method("test.Echo/Write");
    private static final Context.Key<Integer> ATTEMPT = Context.key("attempt");

    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger writes = new AtomicInteger();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final Server server;
    volatile long primaryDelayMs = 2_000;

    EchoServer() throws IOException {
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

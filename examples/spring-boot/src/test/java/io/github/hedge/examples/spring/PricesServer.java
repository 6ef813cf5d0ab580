package io.github.hedge.examples.spring;

import io.github.hedge.grpc.HedgeHeaders;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The prices service on a real grpc-netty server on 127.0.0.1: {@code shop.Prices/Get} answers
 * "9.99", a call's first attempt after {@value #PRIMARY_DELAY_MS} ms and a hedge (marked by
 * {@link HedgeHeaders#ATTEMPT}) at once, as a slow replica and a fast one would.
 */
final class PricesServer implements AutoCloseable {
    static final long PRIMARY_DELAY_MS = 500;
    private static final Context.Key<Integer> ATTEMPT = Context.key("attempt");

    final AtomicInteger attempts = new AtomicInteger();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final Server server;

    PricesServer() throws IOException {
        ServerInterceptor attempt = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                return Contexts.interceptCall(
                        Context.current().withValue(ATTEMPT, HedgeHeaders.attemptNumber(headers)), call, headers, next);
            }
        };
        ServerServiceDefinition service = ServerServiceDefinition.builder("shop.Prices")
                .addMethod(Prices.GET, ServerCalls.asyncUnaryCall((productId, response) -> {
                    attempts.incrementAndGet();
                    long delay = ATTEMPT.get() == 1 ? PRIMARY_DELAY_MS : 0;
                    scheduler.schedule(
                            () -> {
                                response.onNext("9.99");
                                response.onCompleted();
                            },
                            delay,
                            TimeUnit.MILLISECONDS);
                }))
                .build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(service, attempt))
                .build()
                .start();
    }

    /** @return the target for shop.prices.target */
    String target() {
        return "dns:///127.0.0.1:" + server.getPort();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        scheduler.shutdownNow();
    }
}

package io.github.hedge.http;

import java.net.URI;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * One instance of a service: a Reactor Netty HTTP server on 127.0.0.1 that counts, itself, what it
 * received, answered, and could not answer because the client closed the connection.
 *
 * <p>GET /item answers its name (body and header {@code X-Instance}) after its delay, with its
 * status. POST /orders counts the order, then answers the request body the same way.
 */
final class NettyInstance {
    /** Longer than any test: a stalled request ends only when the client closes it. */
    static final Duration STALL = Duration.ofSeconds(30);

    final String name;
    final AtomicReference<Duration> delay = new AtomicReference<>(Duration.ZERO);
    final AtomicInteger status = new AtomicInteger(200);
    final AtomicInteger received = new AtomicInteger();
    final AtomicInteger posts = new AtomicInteger();
    final AtomicInteger cancelled = new AtomicInteger();
    final AtomicInteger answered = new AtomicInteger();
    final Queue<String> bodies = new ConcurrentLinkedQueue<>();
    final DisposableServer server;

    NettyInstance(String name) {
        this.name = name;
        this.server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .route(r -> r.get("/item", (req, res) -> {
                            received.incrementAndGet();
                            return res.status(status.get())
                                    .header("X-Instance", name)
                                    .sendString(answer(Mono.just(name)));
                        })
                        .post("/orders", (req, res) -> req.receive()
                                .aggregate()
                                .asString()
                                .defaultIfEmpty("")
                                .flatMap(body -> {
                                    received.incrementAndGet();
                                    posts.incrementAndGet();
                                    bodies.add(body);
                                    return res.status(status.get())
                                            .header("X-Instance", name)
                                            .sendString(answer(Mono.just(name + ":" + body)))
                                            .then();
                                })))
                .bindNow();
    }

    private Mono<String> answer(Mono<String> value) {
        Duration d = delay.get();
        Mono<String> body = d.isZero() ? value : Mono.delay(d).then(value);
        return body.doOnCancel(cancelled::incrementAndGet).doOnSuccess(v -> answered.incrementAndGet());
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + server.port());
    }

    void reset(Duration d, int s) {
        delay.set(d);
        status.set(s);
        received.set(0);
        posts.set(0);
        cancelled.set(0);
        answered.set(0);
        bodies.clear();
    }
}

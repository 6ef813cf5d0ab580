package io.github.hedge.examples.spring;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * One instance of the inventory service: a Reactor Netty server on 127.0.0.1 answering {@code GET
 * /stock/{id}} with its name after its delay, and counting, itself, the requests it received (and
 * for which ids), those it answered in full, and those the client cancelled (closed the connection)
 * before the answer.
 */
final class InventoryServer implements AutoCloseable {
    final AtomicInteger received = new AtomicInteger();
    final AtomicInteger cancelled = new AtomicInteger();
    final AtomicInteger answered = new AtomicInteger();
    final Queue<String> ids = new ConcurrentLinkedQueue<>();
    private final DisposableServer server;

    InventoryServer(String name, Duration delay) {
        server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .route(r -> r.get("/stock/{id}", (req, res) -> {
                    received.incrementAndGet();
                    ids.add(req.param("id"));
                    Mono<String> answer = Mono.just(name + ":" + req.param("id"));
                    return res.sendString(
                                    (delay.isZero() ? answer : Mono.delay(delay).then(answer))
                                            .doOnCancel(cancelled::incrementAndGet))
                            .then()
                            .doOnSuccess(v -> answered.incrementAndGet());
                }))
                .bindNow();
    }

    String base() {
        return "http://127.0.0.1:" + server.port();
    }

    @Override
    public void close() {
        server.disposeNow();
    }
}

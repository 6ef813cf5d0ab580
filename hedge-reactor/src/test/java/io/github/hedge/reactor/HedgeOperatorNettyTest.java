package io.github.hedge.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.micrometer.HedgeMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.util.context.Context;

/**
 * {@link HedgeOperator} against two real Reactor Netty HTTP servers on 127.0.0.1, one of them slow:
 * what happened is counted at the servers (requests received, responses whose sending was
 * cancelled because the client closed the connection).
 */
class HedgeOperatorNettyTest {
    /** Longer than any test: a slow instance's request ends only when it is cancelled. */
    private static final Duration STALL = Duration.ofSeconds(30);

    private static Instance slow;
    private static Instance fast;
    private static HttpClient client;

    private HedgedExecutor executor;
    private final Queue<CallCompleted> calls = new ConcurrentLinkedQueue<>();

    /** One HTTP server; answers GET /value with its name after its delay. */
    static final class Instance {
        final String name;
        final AtomicReference<Duration> delay = new AtomicReference<>();
        final AtomicInteger received = new AtomicInteger();
        final AtomicInteger cancelled = new AtomicInteger();
        final AtomicInteger answered = new AtomicInteger();
        final Queue<String> tenants = new ConcurrentLinkedQueue<>();
        final DisposableServer server;

        Instance(String name) {
            this.name = name;
            this.server = HttpServer.create()
                    .host("127.0.0.1")
                    .port(0)
                    .route(r -> r.get("/value", (req, res) -> {
                        received.incrementAndGet();
                        String tenant = req.requestHeaders().get("x-tenant");
                        if (tenant != null) {
                            tenants.add(tenant);
                        }
                        Duration d = delay.get();
                        Mono<String> body =
                                d.isZero() ? Mono.just(name) : Mono.delay(d).thenReturn(name);
                        return res.sendString(body.doOnCancel(cancelled::incrementAndGet)
                                .doOnSuccess(v -> answered.incrementAndGet()));
                    }))
                    .bindNow();
        }

        String url() {
            return "http://127.0.0.1:" + server.port() + "/value";
        }

        void reset(Duration d) {
            delay.set(d);
            received.set(0);
            cancelled.set(0);
            answered.set(0);
            tenants.clear();
        }
    }

    @BeforeAll
    static void startServers() {
        slow = new Instance("slow");
        fast = new Instance("fast");
        client = HttpClient.create();
    }

    @AfterAll
    static void stopServers() {
        slow.server.disposeNow();
        fast.server.disposeNow();
    }

    @BeforeEach
    void setUp() {
        slow.reset(STALL);
        fast.reset(Duration.ZERO);
        executor = HedgedExecutor.of(
                "reactor-netty",
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                        .idempotentByDefault(true)
                        .build());
        executor.events().subscribe(CallCompleted.class, calls::add);
    }

    @AfterEach
    void noAttemptLeft() {
        await().untilAsserted(() -> {
            assertThat(executor.stats().inFlightCalls()).isZero();
            assertThat(executor.stats().pendingAttempts()).isZero();
            assertThat(executor.stats().pendingTimers()).isZero();
        });
    }

    /**
     * One request per attempt: the primary to the slow instance, a hedge to the instance not yet
     * tried; the caller's "tenant" context entry, if any, goes out as a header.
     */
    private static Mono<String> request() {
        return Mono.deferContextual(view -> {
            AttemptContext attempt = HedgedMono.currentAttempt(view).orElseThrow();
            Instance target = attempt.triedTargets().contains(slow.name) ? fast : slow;
            attempt.reportTarget(target.name);
            return client.headers(h -> view.<String>getOrEmpty("tenant").ifPresent(t -> h.set("x-tenant", t)))
                    .get()
                    .uri(target.url())
                    .responseContent()
                    .aggregate()
                    .asString();
        });
    }

    @Test
    void should_answer_from_the_fast_instance_and_cancel_the_slow_request_at_the_server_when_the_primary_is_slow() {
        String answer = request().transformDeferred(HedgeOperator.of(executor)).block(Duration.ofSeconds(10));

        assertThat(answer).isEqualTo("fast");
        // the loser's request is cancelled at the server: its connection was closed
        await().untilAsserted(() -> assertThat(slow.cancelled).hasValue(1));
        assertThat(slow.received).hasValue(1);
        assertThat(slow.answered).hasValue(0);
        assertThat(fast.received).hasValue(1);
        await().until(() -> !calls.isEmpty());
        CallCompleted call = calls.poll();
        assertThat(call.outcome()).isEqualTo(CallCompleted.CallOutcome.SUCCESS);
        assertThat(call.winningAttempt()).isEqualTo(2);
        assertThat(call.attempts()).extracting(a -> a.target()).containsExactly("slow", "fast");
    }

    @Test
    void should_cancel_every_attempt_at_the_servers_when_the_caller_disposes() {
        fast.delay.set(STALL);
        Disposable subscription =
                request().transformDeferred(HedgeOperator.of(executor)).subscribe();
        await().until(() -> slow.received.get() == 1 && fast.received.get() == 1);

        subscription.dispose();

        await().untilAsserted(() -> {
            assertThat(slow.cancelled).hasValue(1);
            assertThat(fast.cancelled).hasValue(1);
        });
        await().until(() -> !calls.isEmpty());
        assertThat(calls.poll().outcome()).isEqualTo(CallCompleted.CallOutcome.CANCELLED);
        assertThat(executor.stats().attempts()).isEqualTo(2);
    }

    @Test
    void should_cancel_every_attempt_at_the_servers_when_a_timeout_operator_fires() {
        fast.delay.set(STALL);
        Sinks.Empty<Void> timeUp = Sinks.empty();
        Mono<String> call =
                request().transformDeferred(HedgeOperator.of(executor)).timeout(timeUp.asMono());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        call.subscribe(v -> {}, failure::set);
        await().until(() -> slow.received.get() == 1 && fast.received.get() == 1);

        timeUp.tryEmitEmpty();

        await().untilAsserted(() -> assertThat(failure.get()).isInstanceOf(TimeoutException.class));
        await().untilAsserted(() -> {
            assertThat(slow.cancelled).hasValue(1);
            assertThat(fast.cancelled).hasValue(1);
        });
    }

    @Test
    void should_send_one_request_when_the_call_is_not_idempotent() {
        slow.delay.set(Duration.ofMillis(300)); // 15 times the hedge delay

        String answer = request()
                .transformDeferred(HedgeOperator.of(executor, CallOptions.nonIdempotent()))
                .block(Duration.ofSeconds(10));

        assertThat(answer).isEqualTo("slow");
        assertThat(slow.received).hasValue(1);
        assertThat(slow.answered).hasValue(1);
        assertThat(fast.received).hasValue(0);
        assertThat(executor.stats().notHedgedNonIdempotent()).isEqualTo(1);
    }

    @Test
    void should_give_every_attempt_the_subscribers_context_when_a_hedge_is_sent() {
        String answer = request()
                .transformDeferred(HedgeOperator.of(executor))
                .contextWrite(Context.of("tenant", "tenant-7"))
                .block(Duration.ofSeconds(10));

        assertThat(answer).isEqualTo("fast");
        assertThat(List.copyOf(slow.tenants)).containsExactly("tenant-7");
        assertThat(List.copyOf(fast.tenants)).containsExactly("tenant-7");
    }

    @Test
    void should_publish_the_same_events_and_metrics_as_executeAsync_when_a_hedge_wins() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        HedgeMetrics.of(executor).bindTo(registry);
        Queue<HedgeWon> won = new ConcurrentLinkedQueue<>();
        executor.events().subscribe(HedgeWon.class, won::add);

        request().transformDeferred(HedgeOperator.of(executor)).block(Duration.ofSeconds(10));

        await().untilAsserted(() -> {
            assertThat(won).hasSize(1);
            assertThat(registry.get("hedge.calls")
                            .tag("outcome", "success")
                            .counter()
                            .count())
                    .isEqualTo(1.0);
            assertThat(registry.get("hedge.hedges.sent")
                            .tag("reason", "delay_elapsed")
                            .counter()
                            .count())
                    .isEqualTo(1.0);
            assertThat(registry.get("hedge.hedges.won").counter().count()).isEqualTo(1.0);
        });
        assertThat(executor.stats().hedgesWon()).isEqualTo(1);
    }

    @Test
    void should_fail_with_the_primarys_error_when_every_attempt_fails() {
        Mono<String> refused = Mono.defer(() -> client.get()
                .uri("http://127.0.0.1:" + slow.server.port() + "/missing")
                .responseSingle((res, body) -> res.status().code() == 404
                        ? Mono.<String>error(new IllegalStateException("404"))
                        : body.asString()));

        assertThatThrownBy(() ->
                        refused.transformDeferred(HedgeOperator.of(executor)).block(Duration.ofSeconds(10)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("404");
        assertThat(executor.stats().attempts()).isEqualTo(2); // the failure was retried once
    }
}

package io.github.hedge.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.protobuf.ByteString;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.grpc.Backends.Action;
import io.github.hedge.grpc.Backends.Execution;
import io.github.hedge.grpc.internal.HedgingCall;
import io.github.hedge.grpc.test.EchoGrpc;
import io.github.hedge.grpc.test.EchoReply;
import io.github.hedge.grpc.test.EchoRequest;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/** The interceptor and the balancer against three real grpc-netty backends on 127.0.0.1. */
@Timeout(120) // a hung call fails the test instead of the build
class GrpcHedgingTest {
    static Backends backends;
    final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeAll
    static void startBackends() throws Exception {
        backends = new Backends(3);
    }

    @AfterAll
    static void stopBackends() throws Exception {
        backends.close();
    }

    @BeforeEach
    void reset() {
        backends.reset();
    }

    @AfterEach
    void closeChannels() throws InterruptedException {
        Backends.shutdown(channels);
        backends.reset();
    }

    static HedgingClientInterceptor.Builder hedging(long delayMillis) {
        return HedgingClientInterceptor.builder()
                .defaults(HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(delayMillis)))
                        .budget(HedgeBudget.unlimited())
                        .build());
    }

    /** A channel to the three backends, connected to all of them before it is returned. */
    ManagedChannel channel(HedgingClientInterceptor interceptor, boolean hedgeBalancer) {
        ManagedChannel ch = NettyChannelBuilder.forTarget(backends.target())
                .usePlaintext()
                .defaultLoadBalancingPolicy(hedgeBalancer ? HedgeLoadBalancerProvider.POLICY_NAME : "round_robin")
                .intercept(interceptor)
                .build();
        channels.add(ch);
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(ch);
        Backends.Behaviour behaviour = backends.behaviour();
        backends.behave((b, m, r, a) -> Action.reply(0));
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 200 && seen.size() < 3; i++) {
            seen.add(stub.get(req("warmup")).getBackend());
        }
        assertThat(seen).hasSize(3);
        backends.behave(behaviour);
        backends.executions.clear();
        return ch;
    }

    static EchoRequest req(String text) {
        return EchoRequest.newBuilder().setText(text).build();
    }

    /** How long a test waits for the servers to see what the client did (cancellations, arrivals). */
    static final Duration SERVER_WAIT = Duration.ofSeconds(20);

    /** Waits until the executor has no call, attempt or timer left: nothing can start after it. */
    static void awaitSettled(HedgedExecutor executor) {
        await().atMost(SERVER_WAIT).until(() -> {
            var stats = executor.stats();
            return stats.inFlightCalls() == 0 && stats.pendingAttempts() == 0 && stats.pendingTimers() == 0;
        });
    }

    // ------------------------------------------------------------------------------------------

    @Test
    void should_answer_from_a_fast_backend_and_cancel_the_slow_attempt_when_one_backend_is_slow() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(b == 0 ? 5_000 : 2));
        HedgingClientInterceptor hedging = hedging(30).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        for (int i = 0; i < 30; i++) {
            EchoReply reply = stub.get(req("slow-" + i));
            assertThat(reply.getBackend()).isNotEqualTo("b0");
        }

        List<Execution> onSlow = new ArrayList<>();
        for (Execution e : backends.executions) {
            if (e.backend == 0) {
                onSlow.add(e);
            }
        }
        assertThat(onSlow)
                .as("round robin sends some primaries to the slow backend")
                .isNotEmpty();
        await().atMost(SERVER_WAIT).untilAsserted(() -> assertThat(onSlow)
                .as("the slow backend sees every one of its attempts cancelled (RST_STREAM)")
                .allMatch(e -> e.cancelled));
        assertThat(onSlow).noneMatch(e -> e.answered);
        HedgeStats stats = hedging.executor("hedge.test.Echo/Get").orElseThrow().stats();
        // every primary on the slow backend was won by a hedge (a hedge sent there after a fast primary
        // hiccupped past 30 ms on a loaded machine is on the slow backend too, and loses)
        assertThat(stats.hedgesWon())
                .isGreaterThanOrEqualTo(
                        onSlow.stream().filter(e -> e.attempt == 1).count());
    }

    @Test
    void should_send_every_hedge_to_a_backend_the_call_has_not_tried_when_the_hedge_balancer_is_used()
            throws Exception {
        // every primary is slow, every hedge fast: each call hedges once
        backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 2_000 : 1));
        HedgingClientInterceptor hedging = hedging(20).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        int calls = 40;
        for (int i = 0; i < calls; i++) {
            assertThat(stub.get(req("place-" + i)).getAttempt()).isEqualTo(2);
        }
        for (int i = 0; i < calls; i++) {
            List<Execution> ex = backends.executions("place-" + i);
            assertThat(ex).hasSize(2);
            Execution primary =
                    ex.stream().filter(e -> e.attempt == 1).findFirst().orElseThrow();
            Execution hedge =
                    ex.stream().filter(e -> e.attempt == 2).findFirst().orElseThrow();
            assertThat(hedge.backend).as("call %d", i).isNotEqualTo(primary.backend);
        }
    }

    @Test
    void should_run_a_non_idempotent_method_exactly_once_when_it_is_slow() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(200));
        HedgingClientInterceptor hedging = hedging(10).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        for (int i = 0; i < 5; i++) {
            stub.append(req("once-" + i));
        }
        HedgedExecutor append = hedging.executor("hedge.test.Echo/Append").orElseThrow();
        awaitSettled(append); // no timer left: no attempt can start any more
        assertThat(append.stats().attempts()).isEqualTo(5);
        assertThat(append.stats().notHedgedNonIdempotent()).isEqualTo(5);
        assertThat(backends.executions).hasSize(5);
        assertThat(backends.executions).allMatch(e -> e.attempt == 1 && !e.cancelled);
    }

    @Test
    void should_hedge_an_unmarked_method_when_the_method_policy_declares_it_idempotent() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 1_000 : 1));
        HedgingClientInterceptor hedging = hedging(10)
                .method(
                        "hedge.test.Echo/Append",
                        MethodPolicy.builder().idempotent(true).build())
                .method(
                        "hedge.test.Echo/Put",
                        MethodPolicy.builder().idempotent(false).build())
                .build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        assertThat(stub.append(req("append")).getAttempt()).isEqualTo(2);
        assertThat(stub.put(req("put")).getAttempt()).isEqualTo(1);
        assertThat(backends.executions("put")).hasSize(1);
    }

    @Test
    void should_create_the_method_executors_in_the_given_registry_under_the_prefix_when_a_registry_is_given()
            throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 1_000 : 1));
        HedgedExecutorRegistry registry = HedgedExecutorRegistry.ofDefaults();
        HedgedExecutor other = registry.executor("user-reads");
        HedgingClientInterceptor hedging = hedging(10)
                .method(
                        "hedge.test.Echo/Append",
                        MethodPolicy.builder().idempotent(true).build())
                .method(
                        "hedge.test.Echo/Put",
                        MethodPolicy.builder().idempotent(false).build())
                .registry(registry, "grpc:")
                .build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        assertThat(stub.append(req("append")).getAttempt()).isEqualTo(2);
        assertThat(stub.put(req("put")).getAttempt()).isEqualTo(1);

        assertThat(hedging.executors()).isSameAs(registry);
        HedgedExecutor append = registry.find("grpc:hedge.test.Echo/Append").orElseThrow();
        HedgedExecutor put = registry.find("grpc:hedge.test.Echo/Put").orElseThrow();
        assertThat(hedging.executor("hedge.test.Echo/Append")).containsSame(append);
        // the channel's warm-up called Get too; nothing else of the registry was touched
        assertThat(registry.getAllExecutors())
                .extracting(HedgedExecutor::name)
                .containsExactlyInAnyOrder(
                        "user-reads",
                        "grpc:hedge.test.Echo/Get",
                        "grpc:hedge.test.Echo/Append",
                        "grpc:hedge.test.Echo/Put");
        assertThat(registry.find("user-reads")).containsSame(other);
        assertThat(append.stats().hedgesWon()).isEqualTo(1);
        // each executor's configuration says whether its method is hedged
        assertThat(append.config().idempotentByDefault()).isTrue();
        assertThat(put.config().idempotentByDefault()).isFalse();
        assertThat(put.stats().notHedgedNonIdempotent()).isEqualTo(1);
    }

    @Test
    void should_apply_the_service_wildcard_and_the_exact_method_policy_when_both_match() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(a < 3 ? 2_000 : 1));
        HedgingClientInterceptor hedging = hedging(20)
                .method(
                        "hedge.test.Echo/*",
                        MethodPolicy.builder().maxAttempts(3).build())
                .method(
                        "hedge.test.Echo/Put",
                        MethodPolicy.builder().maxAttempts(2).build())
                .build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        assertThat(stub.get(req("three")).getAttempt()).isEqualTo(3);
        assertThat(stub.put(req("two")).getAttempt()).isLessThanOrEqualTo(2);
        assertThat(hedging.executor("hedge.test.Echo/Get")
                        .orElseThrow()
                        .config()
                        .maxAttempts())
                .isEqualTo(3);
        assertThat(hedging.executor("hedge.test.Echo/Put")
                        .orElseThrow()
                        .config()
                        .maxAttempts())
                .isEqualTo(2);
        assertThat(hedging.executor("hedge.test.Echo/Get").orElseThrow().budget())
                .isSameAs(hedging.executor("hedge.test.Echo/Put").orElseThrow().budget());
    }

    @Test
    void should_end_every_attempt_with_deadline_exceeded_when_the_caller_deadline_passes() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(10_000));
        HedgingClientInterceptor hedging = hedging(50).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        assertThatThrownBy(
                        () -> stub.withDeadlineAfter(400, TimeUnit.MILLISECONDS).get(req("deadline")))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        List<Execution> ex = backends.executions("deadline");
        assertThat(ex).hasSize(2);
        await().atMost(SERVER_WAIT).untilAsserted(() -> assertThat(ex)
                .as("both attempts cancelled on the servers")
                .allMatch(e -> e.cancelled));
    }

    @Test
    void should_cancel_every_attempt_when_the_caller_cancels() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(10_000));
        HedgingClientInterceptor hedging = hedging(20).build();
        EchoGrpc.EchoFutureStub stub = EchoGrpc.newFutureStub(channel(hedging, true));
        long warmUpAttempts =
                hedging.executor("hedge.test.Echo/Get").orElseThrow().stats().attempts();

        ListenableFuture<EchoReply> f = stub.get(req("cancel"));
        await().atMost(SERVER_WAIT).untilAsserted(() -> assertThat(backends.executions("cancel"))
                .as("primary and hedge reached the servers")
                .hasSize(2));
        f.cancel(true);
        assertThatThrownBy(f::get).isInstanceOf(CancellationException.class);
        await().atMost(SERVER_WAIT).untilAsserted(() -> assertThat(backends.executions("cancel"))
                .as("both attempts cancelled on the servers")
                .allMatch(e -> e.cancelled));
        HedgedExecutor get = hedging.executor("hedge.test.Echo/Get").orElseThrow();
        awaitSettled(get);
        assertThat(get.stats().cancelled()).isEqualTo(1);
        assertThat(get.stats().attempts() - warmUpAttempts)
                .as("attempts of this call")
                .isEqualTo(2);
        assertThat(backends.executions("cancel")).hasSize(2);
    }

    @Test
    void should_start_the_next_attempt_at_once_when_an_attempt_ends_unavailable() throws Exception {
        // whichever backend gets the primary refuses it; the timer (10 s) never fires in this test
        backends.behave(
                (b, m, r, a) -> a == 1 ? Action.fail(0, Status.UNAVAILABLE.withDescription("busy")) : Action.reply(0));
        HedgingClientInterceptor hedging = hedging(10_000).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        EchoReply reply = stub.withDeadlineAfter(5, TimeUnit.SECONDS).get(req("unavailable"));
        assertThat(reply.getAttempt()).isEqualTo(2);
        List<Execution> ex = backends.executions("unavailable");
        assertThat(ex).hasSize(2);
        assertThat(ex.get(1).backend).as("the retry goes elsewhere").isNotEqualTo(ex.get(0).backend);
    }

    @Test
    void should_end_the_call_with_the_status_when_an_attempt_fails_with_a_fatal_code() throws Exception {
        backends.behave((b, m, r, a) -> Action.fail(0, Status.INVALID_ARGUMENT.withDescription("bad request")));
        HedgingClientInterceptor hedging = hedging(50).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));
        long warmUpAttempts =
                hedging.executor("hedge.test.Echo/Get").orElseThrow().stats().attempts();

        assertThatThrownBy(() -> stub.get(req("fatal"))).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).isEqualTo("bad request");
        });
        HedgedExecutor get = hedging.executor("hedge.test.Echo/Get").orElseThrow();
        awaitSettled(get); // the call ended and its hedge timer is gone: nothing else may start
        assertThat(get.stats().attempts() - warmUpAttempts)
                .as("attempts of this call")
                .isEqualTo(1);
        assertThat(backends.executions("fatal")).hasSize(1);
    }

    @Test
    void should_make_no_further_attempt_when_the_server_pushes_back_with_a_negative_value() throws Exception {
        Metadata stop = new Metadata();
        stop.put(Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER), "-1");
        backends.behave((b, m, r, a) -> Action.fail(100, Status.UNAVAILABLE.withDescription("overloaded"), stop));
        HedgingClientInterceptor hedging = hedging(500).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));
        long warmUpAttempts =
                hedging.executor("hedge.test.Echo/Get").orElseThrow().stats().attempts();

        assertThatThrownBy(() -> stub.get(req("pushback-stop")))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        HedgedExecutor get = hedging.executor("hedge.test.Echo/Get").orElseThrow();
        awaitSettled(get);
        assertThat(get.stats().attempts() - warmUpAttempts)
                .as("attempts of this call")
                .isEqualTo(1);
        assertThat(backends.executions("pushback-stop")).hasSize(1);
    }

    @Test
    void should_wait_the_pushback_before_the_next_attempt_when_it_arrives_with_an_error_status() throws Exception {
        Metadata wait = new Metadata();
        wait.put(Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER), "400");
        backends.behave((b, m, r, a) ->
                a == 1 ? Action.fail(0, Status.UNAVAILABLE.withDescription("later"), wait) : Action.reply(0));
        HedgingClientInterceptor hedging = hedging(10_000).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        assertThat(stub.get(req("pushback-wait")).getAttempt()).isEqualTo(2);
        List<Execution> ex = backends.executions("pushback-wait");
        assertThat(ex).hasSize(2);
        // a lower bound only: a loaded machine can make it longer, never shorter
        assertThat(TimeUnit.NANOSECONDS.toMillis(ex.get(1).startNanos - ex.get(0).startNanos))
                .isGreaterThanOrEqualTo(400);
    }

    @Test
    void should_hedge_around_a_slow_backend_when_it_sends_response_headers_early() throws Exception {
        backends.earlyHeaders(0, true);
        backends.behave((b, m, r, a) -> Action.reply(b == 0 ? 5_000 : 2));
        HedgingClientInterceptor hedging = hedging(30).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        for (int i = 0; i < 15; i++) {
            assertThat(stub.get(req("early-" + i)).getBackend()).isNotEqualTo("b0");
        }
        assertThat(backends.executions).anyMatch(e -> e.backend == 0);
    }

    @Test
    void should_not_hedge_and_count_it_when_the_request_is_over_the_size_limit() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 1_000 : 1));
        HedgingClientInterceptor hedging =
                hedging(20).maxHedgedRequestBytes(1000).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        EchoRequest big = EchoRequest.newBuilder()
                .setText("big")
                .setPayload(ByteString.copyFrom(new byte[2000]))
                .build();
        assertThat(stub.get(big).getAttempt()).isEqualTo(1);
        assertThat(stub.get(req("small")).getAttempt()).isEqualTo(2);
        assertThat(backends.executions("big")).hasSize(1);
        assertThat(hedging.requestsTooLarge()).containsEntry("hedge.test.Echo/Get", 1L);
    }

    @Test
    void should_log_a_request_over_the_size_limit_once_per_method_and_interceptor_when_it_repeats() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(1));
        Logger logger = (Logger) LoggerFactory.getLogger(HedgingCall.class);
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        logger.addAppender(log);
        try {
            EchoRequest big = EchoRequest.newBuilder()
                    .setText("secret-text")
                    .setPayload(ByteString.copyFrom(new byte[2000]))
                    .build();
            HedgingClientInterceptor first =
                    hedging(20).maxHedgedRequestBytes(1000).build();
            EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(first, true));
            for (int i = 0; i < 3; i++) {
                stub.get(big);
            }
            HedgingClientInterceptor second =
                    hedging(20).maxHedgedRequestBytes(1000).build();
            EchoGrpc.newBlockingStub(channel(second, true)).get(big);

            assertThat(first.requestsTooLarge()).containsEntry("hedge.test.Echo/Get", 3L);
            assertThat(second.requestsTooLarge()).containsEntry("hedge.test.Echo/Get", 1L);
            List<String> lines = log.list.stream()
                    .filter(e -> e.getLevel() == Level.INFO)
                    .map(ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.contains("larger than"))
                    .toList();
            assertThat(lines).hasSize(2).allSatisfy(m -> assertThat(m)
                    .contains("hedge.test.Echo/Get", "1000 bytes")
                    .doesNotContain("secret-text"));
        } finally {
            logger.detachAppender(log);
            log.stop();
        }
    }

    @Test
    void should_pass_streaming_calls_through_untouched() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(200));
        HedgingClientInterceptor hedging = hedging(10).build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        Iterator<EchoReply> it = stub.stream(req("stream"));
        assertThat(it.next().getAttempt()).isEqualTo(1);
        assertThat(it.hasNext()).isFalse();
        assertThat(backends.executions("stream")).hasSize(1);
        assertThat(hedging.executor("hedge.test.Echo/Stream")).isEmpty();
    }

    @Test
    void should_deliver_the_message_only_when_requested_and_close_exactly_once_when_the_listener_is_slow_to_ask()
            throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 2_000 : 1));
        HedgingClientInterceptor hedging = hedging(20).build();
        ManagedChannel ch = channel(hedging, true);

        List<String> events = new CopyOnWriteArrayList<>();
        CountDownLatch closed = new CountDownLatch(1);
        CountDownLatch headers = new CountDownLatch(1);
        ClientCall<EchoRequest, EchoReply> call = ch.newCall(EchoGrpc.getGetMethod(), CallOptions.DEFAULT);
        call.start(
                new ClientCall.Listener<EchoReply>() {
                    @Override
                    public void onHeaders(Metadata h) {
                        events.add("headers");
                        headers.countDown();
                    }

                    @Override
                    public void onMessage(EchoReply message) {
                        events.add("message:" + message.getAttempt());
                    }

                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        events.add("close:" + status.getCode());
                        closed.countDown();
                    }
                },
                new Metadata());
        call.sendMessage(req("flow"));
        call.halfClose();
        assertThat(headers.await(10, TimeUnit.SECONDS)).isTrue();
        HedgedExecutor get = hedging.executor("hedge.test.Echo/Get").orElseThrow();
        // the hedge's answer reached the client and the losing primary was cancelled at its server
        await().atMost(SERVER_WAIT).until(() -> get.stats().hedgesWon() == 1);
        await().atMost(SERVER_WAIT).untilAsserted(() -> assertThat(backends.executions("flow"))
                .filteredOn(e -> e.attempt == 1)
                .singleElement()
                .satisfies(e -> assertThat(e.cancelled).isTrue()));
        assertThat(events).containsExactly("headers");
        call.request(1);
        assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();
        awaitSettled(get);
        assertThat(events).containsExactly("headers", "message:2", "close:OK");
    }

    @Test
    void should_keep_primaries_off_a_backend_ten_times_slower_than_its_peers() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(b == 0 ? 40 : 4));
        HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                .defaults(HedgeConfig.builder().delay(DelayPolicy.never()).build())
                .build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        for (int i = 0; i < 120; i++) {
            stub.get(req("warm-" + i));
        }
        backends.executions.clear();
        for (int i = 0; i < 90; i++) {
            stub.get(req("lb-" + i));
        }
        long onSlow = backends.executions.stream().filter(e -> e.backend == 0).count();
        // round robin alone would give it 30 of 90; it may get a few while it is re-examined
        assertThat(onSlow).isLessThan(10);
    }

    /** Primaries (attempt 1) each backend served, counted at the servers. */
    static long[] primariesPerBackend() {
        long[] n = new long[3];
        for (Execution e : backends.executions) {
            if (e.attempt == 1) {
                n[e.backend]++;
            }
        }
        return n;
    }

    @Test
    void should_spread_primaries_evenly_over_the_healthy_backends_when_one_is_ten_times_slower() throws Exception {
        // b0 answers in 40 ms; b1 and b2 in 0-6 ms, one call in ten 20 ms later (drawn from the text),
        // so calls still unanswered after 15 ms are hedged and those hedges take turns of the rotation
        backends.behave((b, m, r, a) -> Action.reply(
                b == 0
                        ? 40
                        : Math.floorMod(r.getText().hashCode(), 21) / 3
                                + (r.getText().hashCode() % 10 == 0 ? 20 : 0)));
        EchoGrpc.EchoBlockingStub stub =
                EchoGrpc.newBlockingStub(channel(hedging(15).build(), true));

        for (int i = 0; i < 120; i++) {
            stub.get(req("warm-" + i));
        }
        backends.executions.clear();
        // eight callers at once
        EchoGrpc.EchoFutureStub async = EchoGrpc.newFutureStub(stub.getChannel());
        List<ListenableFuture<EchoReply>> pending = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            pending.add(async.get(req("even-" + i)));
            if (pending.size() == 8 || i == 599) {
                for (ListenableFuture<EchoReply> f : pending) {
                    f.get(SERVER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                }
                pending.clear();
            }
        }
        long[] primaries = primariesPerBackend();
        long healthy = primaries[1] + primaries[2];
        String counts = java.util.Arrays.toString(primaries);
        // the slow one may get a few while it is re-examined; the other two share the rest evenly
        assertThat(primaries[0]).as("primaries per backend %s", counts).isLessThan(60);
        assertThat(primaries[1]).as("primaries per backend %s", counts).isBetween(healthy * 4 / 10, healthy * 6 / 10);
        assertThat(primaries[2]).as("primaries per backend %s", counts).isBetween(healthy * 4 / 10, healthy * 6 / 10);
    }

    /** Runs {@code n} calls, eight at a time, named {@code prefix-i}. */
    private static void callsInEights(EchoGrpc.EchoBlockingStub stub, String prefix, int n) throws Exception {
        EchoGrpc.EchoFutureStub async = EchoGrpc.newFutureStub(stub.getChannel());
        List<ListenableFuture<EchoReply>> pending = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            pending.add(async.get(req(prefix + "-" + i)));
            if (pending.size() == 8 || i == n - 1) {
                for (ListenableFuture<EchoReply> f : pending) {
                    f.get(SERVER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                }
                pending.clear();
            }
        }
    }

    @Test
    void should_keep_primaries_off_a_backend_that_stalls_a_fifth_of_its_calls() throws Exception {
        // every backend answers in 0-4 ms (drawn from the text); b0 also stalls one call in five for
        // 150 ms. Its median is its peers': only the share of its primaries that had to be hedged
        // tells it apart
        backends.behave((b, m, r, a) -> Action.reply(
                b == 0 && Math.floorMod(r.getText().hashCode(), 5) == 0
                        ? 150
                        : Math.floorMod(r.getText().hashCode() / 10, 5)));
        EchoGrpc.EchoBlockingStub stub =
                EchoGrpc.newBlockingStub(channel(hedging(15).build(), true));

        callsInEights(stub, "warm", 450);
        backends.executions.clear();
        callsInEights(stub, "stall", 300);

        long[] primaries = primariesPerBackend();
        // round robin alone would give it 100 of 300; it may get some while it is re-examined
        assertThat(primaries[0])
                .as("primaries per backend %s", java.util.Arrays.toString(primaries))
                .isLessThan(50);
    }

    @Test
    void should_spread_primaries_evenly_when_every_backend_stalls_alike() throws Exception {
        // the same stalls on every backend: none stands out, so none leaves the rotation
        backends.behave((b, m, r, a) -> Action.reply(
                Math.floorMod(r.getText().hashCode() + b, 5) == 0
                        ? 150
                        : Math.floorMod(r.getText().hashCode() / 10, 5)));
        EchoGrpc.EchoBlockingStub stub =
                EchoGrpc.newBlockingStub(channel(hedging(15).build(), true));

        callsInEights(stub, "warm", 450);
        backends.executions.clear();
        callsInEights(stub, "even", 300);

        long[] primaries = primariesPerBackend();
        for (int b = 0; b < 3; b++) {
            assertThat(primaries[b])
                    .as("primaries per backend %s", java.util.Arrays.toString(primaries))
                    .isBetween(80L, 120L);
        }
    }

    @Test
    void should_spread_primaries_evenly_over_all_backends_when_all_are_healthy() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(4));
        HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                .defaults(HedgeConfig.builder().delay(DelayPolicy.never()).build())
                .build();
        EchoGrpc.EchoBlockingStub stub = EchoGrpc.newBlockingStub(channel(hedging, true));

        for (int i = 0; i < 300; i++) {
            stub.get(req("even-" + i));
        }
        long[] primaries = primariesPerBackend();
        assertThat(primaries[0] + primaries[1] + primaries[2]).isEqualTo(300);
        for (int b = 0; b < 3; b++) {
            // a third is 100; allow 80..120
            assertThat(primaries[b])
                    .as("primaries per backend %s", java.util.Arrays.toString(primaries))
                    .isBetween(80L, 120L);
        }
    }

    @Test
    void should_reject_invalid_settings_with_the_setting_range_and_value() {
        assertThatThrownBy(() -> HedgingClientInterceptor.builder().maxHedgedRequestBytes(-1))
                .hasMessage("maxHedgedRequestBytes must be >= 0, was -1");
        assertThatThrownBy(() -> HedgingClientInterceptor.builder().method("Echo", MethodPolicy.defaults()))
                .hasMessageContaining("was \"Echo\"");
        assertThatThrownBy(() -> HedgingClientInterceptor.builder().nonFatalCodes(Set.of(Status.Code.OK)))
                .hasMessageContaining("must not contain OK");
        assertThatThrownBy(() -> MethodPolicy.builder().maxAttempts(0))
                .hasMessage("maxAttempts must be in [1, 16], was 0");
        assertThatThrownBy(() -> HedgeSheddingServerInterceptor.maxConcurrentHedges(-1))
                .hasMessage("maxConcurrentHedges must be >= 0, was -1");
        assertThat(new HedgeLoadBalancerProvider()
                        .parseLoadBalancingPolicyConfig(java.util.Map.of("slowRatio", 0.5))
                        .getError()
                        .getDescription())
                .isEqualTo("hedge_round_robin: slowRatio must be > 1, was 0.5");
    }
}

package io.github.hedge.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.Disposable;
import reactor.netty.http.client.HttpClient;

/**
 * {@link HedgingExchangeFilterFunction} on a real {@code WebClient} (Reactor Netty) against two real
 * Reactor Netty servers on 127.0.0.1, one slow; {@link StaticInstanceChooser} places the primary of
 * the first call on the slow one. What happened is counted at the servers and read from the
 * executor's events, never from wall-clock durations.
 */
class HedgingExchangeFilterFunctionTest {
    private static NettyInstance slow;
    private static NettyInstance fast;

    private HedgedExecutor executor;
    private HedgingExchangeFilterFunction filter;
    private WebClient client;
    private final Queue<HedgeEvent> events = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void startServers() {
        slow = new NettyInstance("slow");
        fast = new NettyInstance("fast");
    }

    @AfterAll
    static void stopServers() {
        slow.server.disposeNow();
        fast.server.disposeNow();
    }

    @BeforeEach
    void setUp() {
        slow.reset(NettyInstance.STALL, 200);
        fast.reset(Duration.ZERO, 200);
        client = client(HttpHedgePolicy.defaults());
    }

    private WebClient client(HttpHedgePolicy policy) {
        executor = HedgedExecutor.of(
                "users",
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                        .build());
        executor.events().subscribe(HedgeEvent.class, events::add);
        // the first primary goes to "slow", the first instance listed
        StaticInstanceChooser chooser = StaticInstanceChooser.builder()
                .service("users", List.of(slow.base(), fast.base()))
                .build();
        filter = HedgingExchangeFilterFunction.of(executor, policy, chooser);
        return WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(HttpClient.create()))
                .baseUrl("http://users")
                .filter(filter)
                .build();
    }

    @AfterEach
    void noAttemptLeft() {
        await().untilAsserted(() -> {
            assertThat(executor.stats().inFlightCalls()).isZero();
            assertThat(executor.stats().pendingAttempts()).isZero();
            assertThat(executor.stats().pendingTimers()).isZero();
        });
    }

    private <E extends HedgeEvent> List<E> events(Class<E> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    @Test
    void should_answer_from_the_fast_instance_and_cancel_the_slow_request_at_the_server_when_the_primary_is_slow() {
        ResponseEntity<String> answer =
                client.get().uri("/item").retrieve().toEntity(String.class).block(Duration.ofSeconds(10));

        assertThat(answer.getBody()).isEqualTo("fast");
        assertThat(answer.getHeaders().get("X-Instance")).containsExactly("fast");
        assertThat(events(HedgeWon.class)).hasSize(1);
        assertThat(slow.received).hasValue(1);
        assertThat(fast.received).hasValue(1);
        // the loser's request is cancelled at the server: its connection was closed
        await().untilAsserted(() -> assertThat(slow.cancelled).hasValue(1));
        assertThat(slow.answered).hasValue(0);
    }

    @Test
    void should_send_a_post_exactly_once_when_it_is_not_marked() {
        slow.delay.set(Duration.ofMillis(200));

        String answer = client.post()
                .uri("/orders")
                .bodyValue("order-1")
                .retrieve()
                .bodyToMono(String.class)
                .block(Duration.ofSeconds(10));

        assertThat(answer).isEqualTo("slow:order-1");
        assertThat(slow.posts).hasValue(1);
        assertThat(fast.posts).hasValue(0);
        assertThat(events(HedgeSent.class)).isEmpty();
        assertThat(events(NotHedged.class))
                .extracting(NotHedged::reason)
                .containsExactly(NotHedged.Reason.NON_IDEMPOTENT);
    }

    @Test
    void should_hedge_a_post_with_the_same_body_when_it_carries_an_idempotency_key() {
        String answer = client.post()
                .uri("/orders")
                .header("Idempotency-Key", "k-1")
                .bodyValue("order-2")
                .retrieve()
                .bodyToMono(String.class)
                .block(Duration.ofSeconds(10));

        assertThat(answer).isEqualTo("fast:order-2");
        assertThat(fast.bodies).containsExactly("order-2");
        assertThat(events(HedgeWon.class)).hasSize(1);
    }

    @Test
    void should_hedge_a_post_when_the_request_attribute_marks_it() {
        String answer = client.post()
                .uri("/orders")
                .attribute(HttpHedgePolicy.IDEMPOTENT_ATTRIBUTE, true)
                .bodyValue("order-3")
                .retrieve()
                .bodyToMono(String.class)
                .block(Duration.ofSeconds(10));

        assertThat(answer).isEqualTo("fast:order-3");
        assertThat(slow.posts.get() + fast.posts.get()).isEqualTo(2);
    }

    @Test
    void should_send_a_post_once_and_count_it_when_its_body_is_over_the_limit() {
        client = client(HttpHedgePolicy.builder().maxHedgedRequestBytes(4).build());
        slow.delay.set(Duration.ofMillis(200));

        String answer = client.post()
                .uri("/orders")
                .header("Idempotency-Key", "k-2")
                .bodyValue("longer than four bytes")
                .retrieve()
                .bodyToMono(String.class)
                .block(Duration.ofSeconds(10));

        assertThat(answer).isEqualTo("slow:longer than four bytes");
        assertThat(slow.posts.get() + fast.posts.get()).isEqualTo(1);
        assertThat(filter.requestsTooLarge()).isEqualTo(1);
        assertThat(events(HedgeSent.class)).isEmpty();
        assertThat(events(NotHedged.class))
                .extracting(NotHedged::reason)
                .containsExactly(NotHedged.Reason.REQUEST_TOO_LARGE);
    }

    @Test
    void should_not_let_a_5xx_win_when_the_primary_is_slower() {
        slow.delay.set(Duration.ofMillis(200));
        fast.status.set(503);

        ResponseEntity<String> answer =
                client.get().uri("/item").retrieve().toEntity(String.class).block(Duration.ofSeconds(10));

        assertThat(answer.getStatusCode().value()).isEqualTo(200);
        assertThat(answer.getBody()).isEqualTo("slow");
        assertThat(fast.received).hasValue(1);
    }

    @Test
    void should_give_the_caller_the_primary_response_when_every_attempt_fails() {
        slow.reset(Duration.ofMillis(100), 503);
        fast.status.set(503);

        assertThatThrownBy(() -> client.get()
                        .uri("/item")
                        .retrieve()
                        .toEntity(String.class)
                        .block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(WebClientResponseException.class, e -> {
                    assertThat(e.getStatusCode().value()).isEqualTo(503);
                    assertThat(e.getHeaders().get("X-Instance")).containsExactly("slow");
                });
        assertThat(events(CallCompleted.class)).hasSize(1);
    }

    @Test
    void should_cancel_every_attempt_at_the_servers_when_the_caller_cancels() {
        fast.delay.set(NettyInstance.STALL);

        Disposable call =
                client.get().uri("/item").retrieve().bodyToMono(String.class).subscribe();
        await().untilAsserted(() ->
                assertThat(slow.received.get() + fast.received.get()).isEqualTo(2));
        call.dispose();

        await().untilAsserted(() -> {
            assertThat(slow.cancelled).hasValue(1);
            assertThat(fast.cancelled).hasValue(1);
        });
    }

    @Test
    void should_cancel_every_attempt_at_the_servers_when_the_client_times_out() {
        fast.delay.set(NettyInstance.STALL);

        assertThatThrownBy(() -> client.get()
                        .uri("/item")
                        .retrieve()
                        .bodyToMono(String.class)
                        .timeout(Duration.ofMillis(300))
                        .block(Duration.ofSeconds(10)))
                .hasCauseInstanceOf(TimeoutException.class);

        await().untilAsserted(() -> {
            assertThat(slow.cancelled).hasValue(1);
            assertThat(fast.cancelled).hasValue(1);
        });
        assertThat(slow.received.get() + fast.received.get()).isEqualTo(2);
    }
}

package io.github.hedge.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

/**
 * {@link HedgingClientHttpRequestInterceptor} on a real {@code RestClient} (JDK HttpClient factory)
 * against two embedded Tomcat servers on 127.0.0.1, one stalled, and, where the server must see a
 * request cancelled, two Reactor Netty servers (Tomcat does not notice a closed connection while a
 * servlet waits). Counted at the servers and read from the executor's events.
 */
class HedgingClientHttpRequestInterceptorTest {
    private static TomcatInstance slowTomcat;
    private static TomcatInstance fastTomcat;
    private static NettyInstance slowNetty;
    private static NettyInstance fastNetty;

    private HedgedExecutor executor;
    private HedgingClientHttpRequestInterceptor interceptor;
    private final Queue<HedgeEvent> events = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void startServers() throws Exception {
        slowTomcat = new TomcatInstance("slow");
        fastTomcat = new TomcatInstance("fast");
        slowNetty = new NettyInstance("slow");
        fastNetty = new NettyInstance("fast");
    }

    @AfterAll
    static void stopServers() throws Exception {
        slowTomcat.stop();
        fastTomcat.stop();
        slowNetty.server.disposeNow();
        fastNetty.server.disposeNow();
    }

    @BeforeEach
    void setUp() {
        slowTomcat.reset();
        fastTomcat.reset();
        slowNetty.reset(NettyInstance.STALL, 200);
        fastNetty.reset(Duration.ZERO, 200);
    }

    @AfterEach
    void noAttemptLeft() {
        slowTomcat.release();
        fastTomcat.release();
        await().untilAsserted(() -> {
            assertThat(executor.stats().inFlightCalls()).isZero();
            assertThat(executor.stats().pendingAttempts()).isZero();
            assertThat(executor.stats().pendingTimers()).isZero();
        });
    }

    /** A RestClient whose first primary goes to {@code first}. */
    private RestClient client(URI first, URI second, Duration readTimeout) {
        executor = HedgedExecutor.of(
                "users",
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                        .build());
        executor.events().subscribe(HedgeEvent.class, events::add);
        StaticInstanceChooser chooser = StaticInstanceChooser.builder()
                .service("users", List.of(first, second))
                .build();
        interceptor = HedgingClientHttpRequestInterceptor.of(executor, HttpHedgePolicy.defaults(), chooser);
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(HttpClient.newHttpClient());
        if (readTimeout != null) {
            factory.setReadTimeout(readTimeout);
        }
        return RestClient.builder()
                .requestFactory(factory)
                .baseUrl("http://users")
                .requestInterceptor(interceptor)
                .build();
    }

    private <E extends HedgeEvent> List<E> events(Class<E> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    @Test
    void should_answer_from_the_fast_tomcat_with_its_headers_and_body_when_the_primary_stalls() {
        slowTomcat.stallUntilReleased();
        RestClient client = client(slowTomcat.base(), fastTomcat.base(), null);

        ResponseEntity<String> answer = client.get().uri("/item").retrieve().toEntity(String.class);

        assertThat(answer.getBody()).isEqualTo("fast");
        assertThat(answer.getHeaders().get("X-Instance")).containsExactly("fast");
        assertThat(events(HedgeWon.class)).hasSize(1);
        assertThat(slowTomcat.received).hasValue(1);
        assertThat(fastTomcat.received).hasValue(1);
    }

    @Test
    void should_send_a_post_exactly_once_to_tomcat_when_it_is_not_marked() {
        slowTomcat.stallUntilReleased();
        RestClient client = client(slowTomcat.base(), fastTomcat.base(), null);
        AtomicReference<String> answer = new AtomicReference<>();
        Thread caller = new Thread(() -> answer.set(
                client.post().uri("/orders").body("order-1").retrieve().body(String.class)));
        caller.start();
        await().untilAsserted(() -> assertThat(slowTomcat.posts).hasValue(1));
        // no hedge goes out while the primary is held: the executor says why
        await().untilAsserted(() -> assertThat(events(NotHedged.class))
                .extracting(NotHedged::reason)
                .containsExactly(NotHedged.Reason.NON_IDEMPOTENT));
        slowTomcat.release();
        await().until(() -> answer.get() != null);

        assertThat(answer.get()).isEqualTo("slow:order-1");
        assertThat(slowTomcat.posts).hasValue(1);
        assertThat(fastTomcat.posts).hasValue(0);
        assertThat(events(HedgeSent.class)).isEmpty();
    }

    @Test
    void should_hedge_a_post_to_tomcat_with_the_same_body_when_it_carries_an_idempotency_key() {
        slowTomcat.stallUntilReleased();
        RestClient client = client(slowTomcat.base(), fastTomcat.base(), null);

        String answer = client.post()
                .uri("/orders")
                .header("Idempotency-Key", "k-1")
                .body("order-2")
                .retrieve()
                .body(String.class);

        assertThat(answer).isEqualTo("fast:order-2");
        assertThat(fastTomcat.posts).hasValue(1);
    }

    @Test
    void should_send_a_post_once_and_count_it_when_its_body_is_over_the_limit() {
        RestClient client = client(slowTomcat.base(), fastTomcat.base(), null);
        interceptor = HedgingClientHttpRequestInterceptor.of(
                executor,
                HttpHedgePolicy.builder().maxHedgedRequestBytes(4).build(),
                StaticInstanceChooser.builder()
                        .service("users", List.of(slowTomcat.base(), fastTomcat.base()))
                        .build());
        client = client.mutate()
                .requestInterceptors(list -> {
                    list.clear();
                    list.add(interceptor);
                })
                .build();
        slowTomcat.stallUntilReleased();
        RestClient c = client;
        Thread caller = new Thread(() -> c.post()
                .uri("/orders")
                .header("Idempotency-Key", "k-2")
                .body("longer than four bytes")
                .retrieve()
                .body(String.class));
        caller.start();
        await().untilAsserted(() -> assertThat(events(NotHedged.class)).isNotEmpty());
        slowTomcat.release();
        await().until(() -> !caller.isAlive());

        assertThat(slowTomcat.posts.get() + fastTomcat.posts.get()).isEqualTo(1);
        assertThat(interceptor.requestsTooLarge()).isEqualTo(1);
        assertThat(events(HedgeSent.class)).isEmpty();
        assertThat(events(NotHedged.class))
                .extracting(NotHedged::reason)
                .containsExactly(NotHedged.Reason.REQUEST_TOO_LARGE);
    }

    @Test
    void should_not_let_a_5xx_win_when_the_primary_is_slower() {
        slowNetty.delay.set(Duration.ofMillis(200));
        fastNetty.status.set(503);
        RestClient client = client(slowNetty.base(), fastNetty.base(), null);

        ResponseEntity<String> answer = client.get().uri("/item").retrieve().toEntity(String.class);

        assertThat(answer.getBody()).isEqualTo("slow");
        assertThat(fastNetty.received).hasValue(1);
    }

    @Test
    void should_cancel_the_losing_request_at_the_server_when_the_hedge_wins() {
        RestClient client = client(slowNetty.base(), fastNetty.base(), null);

        String answer = client.get().uri("/item").retrieve().body(String.class);

        assertThat(answer).isEqualTo("fast");
        await().untilAsserted(() -> assertThat(slowNetty.cancelled).hasValue(1));
        assertThat(slowNetty.answered).hasValue(0);
    }

    @Test
    void should_cancel_every_attempt_at_the_servers_when_the_caller_is_interrupted() {
        fastNetty.delay.set(NettyInstance.STALL);
        RestClient client = client(slowNetty.base(), fastNetty.base(), null);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                client.get().uri("/item").retrieve().body(String.class);
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        caller.start();
        await().untilAsserted(() ->
                assertThat(slowNetty.received.get() + fastNetty.received.get()).isEqualTo(2));
        caller.interrupt();

        await().untilAsserted(() -> {
            assertThat(slowNetty.cancelled).hasValue(1);
            assertThat(fastNetty.cancelled).hasValue(1);
        });
        await().until(() -> !caller.isAlive());
        assertThat(failure.get()).isInstanceOf(ResourceAccessException.class);
    }

    @Test
    void should_cancel_every_attempt_at_the_servers_when_the_read_times_out() {
        fastNetty.delay.set(NettyInstance.STALL);
        RestClient client = client(slowNetty.base(), fastNetty.base(), Duration.ofMillis(300));

        assertThatThrownBy(() -> client.get().uri("/item").retrieve().body(String.class))
                .isInstanceOf(ResourceAccessException.class);

        await().untilAsserted(() -> {
            assertThat(slowNetty.cancelled).hasValue(1);
            assertThat(fastNetty.cancelled).hasValue(1);
        });
        assertThat(slowNetty.received.get() + fastNetty.received.get()).isEqualTo(2);
    }
}

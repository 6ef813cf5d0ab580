package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.HedgeWon;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.http.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.autoconfigure.http.codec.CodecsAutoConfiguration;
import org.springframework.boot.autoconfigure.web.client.RestClientAutoConfiguration;
import org.springframework.boot.autoconfigure.web.client.RestTemplateAutoConfiguration;
import org.springframework.boot.autoconfigure.web.reactive.function.client.ClientHttpConnectorAutoConfiguration;
import org.springframework.boot.autoconfigure.web.reactive.function.client.WebClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.web.client.RestTemplateBuilder;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * hedge.http.* applied to Spring Boot's own WebClient, RestClient and RestTemplate builders, against
 * two real Reactor Netty servers on 127.0.0.1 (one stalled); counted at the servers.
 */
class HedgeHttpAutoConfigurationTest {
    private static final AtomicInteger slowReceived = new AtomicInteger();
    private static final AtomicInteger slowCancelled = new AtomicInteger();
    private static final AtomicInteger fastReceived = new AtomicInteger();
    private static DisposableServer slow;
    private static DisposableServer fast;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    HedgeAutoConfiguration.class,
                    HedgeHttpAutoConfiguration.class,
                    HttpMessageConvertersAutoConfiguration.class,
                    RestClientAutoConfiguration.class,
                    RestTemplateAutoConfiguration.class,
                    CodecsAutoConfiguration.class,
                    ClientHttpConnectorAutoConfiguration.class,
                    WebClientAutoConfiguration.class));

    @BeforeAll
    static void startServers() {
        slow = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((req, res) -> {
                    slowReceived.incrementAndGet();
                    return res.sendString(Mono.delay(Duration.ofSeconds(30))
                            .thenReturn("slow")
                            .doOnCancel(slowCancelled::incrementAndGet));
                })
                .bindNow();
        fast = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((req, res) -> {
                    fastReceived.incrementAndGet();
                    return res.sendString(Mono.just("fast"));
                })
                .bindNow();
    }

    @AfterAll
    static void stopServers() {
        slow.disposeNow();
        fast.disposeNow();
    }

    @BeforeEach
    void reset() {
        slowReceived.set(0);
        slowCancelled.set(0);
        fastReceived.set(0);
    }

    private ApplicationContextRunner users() {
        return runner.withPropertyValues(
                "hedge.instances.users.delay.fixed=20ms",
                "hedge.http.clients.users.instances=http://127.0.0.1:" + slow.port() + ",http://127.0.0.1:"
                        + fast.port());
    }

    @Test
    void should_hedge_around_the_stalled_instance_when_a_rest_client_from_spring_boots_builder_calls_a_listed_client() {
        users().run(context -> {
            RestClient client = context.getBean(RestClient.Builder.class).build();
            HedgedExecutor executor = context.getBean(HedgeInstances.class).executor("users");
            AtomicInteger won = new AtomicInteger();
            executor.events().subscribe(HedgeWon.class, e -> won.incrementAndGet());

            assertThat(client.get().uri("http://users/item").retrieve().body(String.class))
                    .isEqualTo("fast");
            assertThat(won).hasValue(1);
            assertThat(slowReceived).hasValue(1);
            assertThat(context.getBean(HedgeInstances.class).names()).contains("users");
        });
    }

    @Test
    void should_hedge_around_the_stalled_instance_when_a_web_client_from_spring_boots_builder_calls_a_listed_client() {
        users().run(context -> {
            WebClient client = context.getBean(WebClient.Builder.class).build();

            String answer = client.get()
                    .uri("http://users/item")
                    .retrieve()
                    .bodyToMono(String.class)
                    .block(Duration.ofSeconds(10));

            assertThat(answer).isEqualTo("fast");
            assertThat(slowReceived).hasValue(1);
            assertThat(fastReceived).hasValue(1);
        });
    }

    @Test
    void should_leave_requests_to_an_unlisted_host_unhedged_when_hedge_unlisted_is_off() {
        users().run(context -> {
            String unlisted = "http://127.0.0.1:" + fast.port() + "/item";
            RestClient rest = context.getBean(RestClient.Builder.class).build();
            WebClient web = context.getBean(WebClient.Builder.class).build();

            assertThat(rest.get().uri(unlisted).retrieve().body(String.class)).isEqualTo("fast");
            assertThat(web.get()
                            .uri(unlisted)
                            .retrieve()
                            .bodyToMono(String.class)
                            .block(Duration.ofSeconds(10)))
                    .isEqualTo("fast");

            assertThat(fastReceived).hasValue(2);
            // neither request went through hedge: the instance for unlisted hosts ran no call
            HedgeInstances instances = context.getBean(HedgeInstances.class);
            assertThat(instances.executor("http").stats().calls()).isZero();
        });
    }

    @Test
    void should_hedge_requests_to_an_unlisted_host_on_the_http_instance_when_hedge_unlisted_is_on() {
        users().withPropertyValues("hedge.http.hedge-unlisted=true").run(context -> {
            String unlisted = "http://127.0.0.1:" + fast.port() + "/item";
            RestClient rest = context.getBean(RestClient.Builder.class).build();
            WebClient web = context.getBean(WebClient.Builder.class).build();

            assertThat(rest.get().uri(unlisted).retrieve().body(String.class)).isEqualTo("fast");
            assertThat(web.get()
                            .uri(unlisted)
                            .retrieve()
                            .bodyToMono(String.class)
                            .block(Duration.ofSeconds(10)))
                    .isEqualTo("fast");

            HedgeInstances instances = context.getBean(HedgeInstances.class);
            assertThat(instances.executor("http").stats().calls()).isEqualTo(2);
        });
    }

    @Test
    void
            should_hedge_around_the_stalled_instance_when_a_rest_template_from_spring_boots_builder_calls_a_listed_client() {
        users().run(context -> {
            String answer =
                    context.getBean(RestTemplateBuilder.class).build().getForObject("http://users/item", String.class);

            assertThat(answer).isEqualTo("fast");
        });
    }

    @Test
    void should_leave_the_builders_alone_when_disabled() {
        users().withPropertyValues("hedge.http.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(HedgeHttpClients.class);
            assertThat(context).hasSingleBean(RestClient.Builder.class);
        });
    }

    @Test
    void should_fail_at_startup_naming_the_setting_its_range_and_the_value_when_a_value_is_out_of_range() {
        runner.withPropertyValues("hedge.http.max-hedged-request-bytes=-1")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .isInstanceOf(InvalidHedgePropertyException.class)
                        .hasMessage("hedge.http.max-hedged-request-bytes must be in [0, 2147483647], was -1"));
        runner.withPropertyValues("hedge.http.retryable-statuses=503,200")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessage("hedge.http.retryable-statuses must be statuses in [400, 599], was 200"));
        runner.withPropertyValues("hedge.http.clients.users.idempotent-routes=/orders")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("hedge.http.clients.users.idempotent-routes must be routes"));
        runner.withPropertyValues("hedge.http.clients.users.instances=users-1")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("hedge.http.clients.users.instances must be base URIs"));
    }
}

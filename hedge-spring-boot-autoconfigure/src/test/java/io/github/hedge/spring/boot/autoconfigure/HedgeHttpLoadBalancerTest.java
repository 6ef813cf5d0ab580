package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.hedge.http.loadbalancer.LoadBalancerInstanceChooser;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.http.codec.CodecsAutoConfiguration;
import org.springframework.boot.autoconfigure.web.reactive.function.client.ClientHttpConnectorAutoConfiguration;
import org.springframework.boot.autoconfigure.web.reactive.function.client.WebClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * hedge.http.* with Spring Cloud LoadBalancer: service {@code inventory} has three instances on
 * 127.0.0.1, registered with Spring Cloud's {@code SimpleDiscoveryClient}; one of them stalls every
 * request. Each server records, per call (the {@code call} query parameter), that a request of it
 * arrived there.
 */
class HedgeHttpLoadBalancerTest {
    private static final Map<String, List<Integer>> arrivals = new ConcurrentHashMap<>();
    private static final Map<Integer, AtomicInteger> received = new ConcurrentHashMap<>();
    private static final List<DisposableServer> fast = new ArrayList<>();
    private static DisposableServer slow;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    UtilAutoConfiguration.class,
                    SimpleDiscoveryClientAutoConfiguration.class,
                    LoadBalancerAutoConfiguration.class,
                    HedgeAutoConfiguration.class,
                    HedgeHttpAutoConfiguration.class,
                    CodecsAutoConfiguration.class,
                    ClientHttpConnectorAutoConfiguration.class,
                    WebClientAutoConfiguration.class))
            .withPropertyValues(
                    "hedge.instances.inventory.delay.fixed=20ms",
                    // a third of the primaries stall until the slow instance is recognised: budget for them
                    "hedge.instances.inventory.max-extra-load=0.5",
                    "hedge.http.clients.inventory.enabled=true",
                    "spring.cloud.discovery.client.simple.instances.inventory[0].uri=http://127.0.0.1:"
                            + fast.get(0).port(),
                    "spring.cloud.discovery.client.simple.instances.inventory[1].uri=http://127.0.0.1:"
                            + fast.get(1).port(),
                    "spring.cloud.discovery.client.simple.instances.inventory[2].uri=http://127.0.0.1:" + slow.port());

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 2; i++) {
            fast.add(server(Mono.just("fast")));
        }
        slow = server(Mono.delay(Duration.ofSeconds(5)).thenReturn("slow"));
    }

    private static DisposableServer server(Mono<String> answer) {
        AtomicInteger port = new AtomicInteger();
        DisposableServer server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((req, res) -> {
                    String call = req.uri().replaceAll(".*call=", "");
                    arrivals.computeIfAbsent(call, k -> new CopyOnWriteArrayList<>())
                            .add(port.get());
                    received.computeIfAbsent(port.get(), k -> new AtomicInteger())
                            .incrementAndGet();
                    return res.sendString(answer);
                })
                .bindNow();
        port.set(server.port());
        return server;
    }

    @AfterAll
    static void stopServers() {
        fast.forEach(DisposableServer::disposeNow);
        slow.disposeNow();
    }

    @BeforeEach
    void reset() {
        arrivals.clear();
        received.clear();
    }

    private static List<String> call(WebClient client, int from, int count) {
        return Flux.range(from, count)
                .flatMap(
                        i -> client.get()
                                .uri("http://inventory/stock?call=" + i)
                                .retrieve()
                                .bodyToMono(String.class),
                        6)
                .collectList()
                .block(Duration.ofSeconds(10));
    }

    private static int at(DisposableServer server) {
        AtomicInteger n = received.get(server.port());
        return n == null ? 0 : n.get();
    }

    @Test
    void should_send_each_hedge_to_an_instance_the_call_has_not_tried_when_spring_cloud_loadbalancer_lists_them() {
        runner.run(context -> {
            WebClient client = context.getBean(WebClient.Builder.class).build();

            List<String> answers = call(client, 0, 60);

            assertThat(answers).hasSize(60).containsOnly("fast");
            List<List<Integer>> hedged =
                    arrivals.values().stream().filter(ports -> ports.size() > 1).toList();
            // every third primary lands on the stalling instance (not yet recognised after 60 calls)
            assertThat(hedged).hasSizeGreaterThanOrEqualTo(10);
            assertThat(hedged).allSatisfy(ports -> assertThat(ports).doesNotHaveDuplicates());
            assertThat(at(fast.get(0)) + at(fast.get(1))).isGreaterThanOrEqualTo(60);
        });
    }

    @Test
    void should_keep_primaries_and_hedges_off_the_stalling_instance_when_it_is_recognised() {
        runner.run(context -> {
            WebClient client = context.getBean(WebClient.Builder.class).build();
            LoadBalancerInstanceChooser chooser = context.getBean(LoadBalancerInstanceChooser.class);
            String slowTarget = "127.0.0.1:" + slow.port();
            AtomicInteger sent = new AtomicInteger();

            await().atMost(Duration.ofSeconds(20)).until(() -> {
                call(client, sent.getAndAdd(30), 30);
                return chooser.stallingInstances("inventory").contains(slowTarget);
            });
            assertThat(at(slow)).isGreaterThanOrEqualTo(30);
            List<String> answers = call(client, 10_000, 60);

            assertThat(answers).hasSize(60).containsOnly("fast");
            // calls 10000-10059, by the arrivals of their own requests: a loser of an earlier call that
            // reaches the slow server late is not counted; two attempts at most, so a hedge of these
            // calls had an untried instance that is not stalling
            List<List<Integer>> calls = IntStream.range(10_000, 10_060)
                    .mapToObj(i -> arrivals.getOrDefault(String.valueOf(i), List.of()))
                    .toList();
            assertThat(calls).allSatisfy(ports -> assertThat(ports).isNotEmpty().doesNotContain(slow.port()));
        });
    }
}

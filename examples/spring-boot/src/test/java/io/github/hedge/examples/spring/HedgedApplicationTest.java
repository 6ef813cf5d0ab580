package io.github.hedge.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import io.netty.util.Version;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application on a random port, against a simulated Cassandra cluster and a real gRPC server,
 * driven by real HTTP requests: hedging happens (the metrics and the {@code hedges} endpoint say so,
 * for the {@code @Hedged} instances, the Cassandra session and the gRPC method alike), a method not
 * marked idempotent runs exactly once per request, and Spring Boot, the Cassandra driver and
 * grpc-netty share one Netty.
 */
@SpringBootTest(
        classes = HedgedApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            // the prices method earns half a hedge per call, so a few requests show hedges winning
            "hedge.instances.grpc.max-extra-load=0.5",
            // the inventory calls may hedge every call, so each one that starts on the slow instance is hedged
            "hedge.instances.inventory.max-extra-load=0.5",
            "spring.cassandra.local-datacenter=dc1",
            "spring.cassandra.request.timeout=10s"
        })
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HedgedApplicationTest {
    private static final SimulatedShopCassandra CASSANDRA = new SimulatedShopCassandra();
    private static final PricesServer PRICES = startPrices();
    /** The inventory service: the first instance listed answers after 2 s, the second at once. */
    private static final InventoryServer SLOW_INVENTORY = new InventoryServer("slow", Duration.ofSeconds(2));

    private static final InventoryServer FAST_INVENTORY = new InventoryServer("fast", Duration.ZERO);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern NETTY_JAR = Pattern.compile("(netty-[a-z0-9-]+?)-(\\d+\\.\\d+\\.\\d+\\.Final)\\.jar");

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @LocalServerPort
    int port;

    @Autowired
    UserService users;

    @Autowired
    OrderService orders;

    @Autowired
    HedgeInstances instances;

    @Autowired
    CqlSession session;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        registry.add("spring.cassandra.contact-points", CASSANDRA::contactPoint);
        registry.add("shop.prices.target", PRICES::target);
        registry.add("shop.inventory.instances", () -> SLOW_INVENTORY.base() + "," + FAST_INVENTORY.base());
    }

    private static PricesServer startPrices() {
        try {
            return new PricesServer();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterAll
    static void stopBackends() throws Exception {
        SLOW_INVENTORY.close();
        FAST_INVENTORY.close();
        try {
            PRICES.close();
        } finally {
            CASSANDRA.close();
        }
    }

    @Test
    @Order(1) // first: it counts the users backend's invocations from zero
    void should_answer_from_the_hedge_when_the_first_invocation_is_slow() throws Exception {
        String answer = users.find("42").toCompletableFuture().get(30, TimeUnit.SECONDS);
        // invocation 1 is the slow one (2 s); the hedge after 50 ms is invocation 2
        assertThat(answer).isEqualTo("user-42 (invocation 2)");
        assertThat(users.invocations()).isEqualTo(2);
    }

    @Test
    void should_answer_stock_reads_from_the_fast_inventory_instance_through_hedged_rest_and_web_clients()
            throws Exception {
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            HttpResponse<String> rest = get("/stock/" + i);
            HttpResponse<String> web = get("/stock-reactive/" + (100 + i)); // ids differ per call
            assertThat(rest.statusCode()).isEqualTo(200);
            assertThat(web.statusCode()).isEqualTo(200);
            answers.add(rest.body());
            answers.add(web.body());
        }
        // primaries alternate between the instances; those on the slow one (2 s) are hedged after
        // 50 ms to the fast one, which answers: no answer comes from the slow instance
        assertThat(answers).allMatch(a -> a.startsWith("fast:"));
        assertThat(SLOW_INVENTORY.received.get()).isPositive();
        // at the servers: every id the slow instance received, a hedge also brought to the fast one,
        // which answered every request in full; the slow instance answered none
        assertThat(FAST_INVENTORY.ids).containsAll(SLOW_INVENTORY.ids);
        assertThat(FAST_INVENTORY.received.get()).isEqualTo(8);
        org.awaitility.Awaitility.await()
                .untilAsserted(() -> assertThat(FAST_INVENTORY.answered.get()).isEqualTo(8));
        assertThat(SLOW_INVENTORY.answered.get()).isZero();
        // the slow instance's requests were cancelled at the server: the losers' connections closed
        org.awaitility.Awaitility.await().untilAsserted(() -> assertThat(SLOW_INVENTORY.cancelled.get())
                .isEqualTo(SLOW_INVENTORY.received.get()));
        JsonNode counters = hedges().path("inventory").path("counters");
        assertThat(counters.path("hedgesWon").asLong()).isEqualTo(SLOW_INVENTORY.received.get());
        assertThat(measurement("hedge.hedges.won", "inventory")).isEqualTo((double) SLOW_INVENTORY.received.get());
    }

    @Test
    void should_configure_the_users_instance_from_application_properties_when_started() {
        HedgedExecutor executor = instances.executor("users");
        assertThat(executor.config().maxAttempts()).isEqualTo(2);
        assertThat(executor.config().idempotentByDefault()).isTrue();
        assertThat(executor.config().deadline()).contains(Duration.ofSeconds(5));
    }

    @Test
    void should_hedge_user_reads_over_http_and_show_the_hedges_won_in_metrics_and_actuator() throws Exception {
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> r = get("/users/" + i);
            assertThat(r.statusCode()).isEqualTo(200);
            answers.add(r.body());
        }
        // odd invocations take 2 s; the hedge after 50 ms (an even, fast invocation) answers when the
        // budget (5%, at least one hedge a second) grants it
        assertThat(answers).anyMatch(a -> a.matches("user-\\d \\(invocation \\d*[02468]\\)"));

        double wonByMetrics = measurement("hedge.hedges.won", "users");
        assertThat(wonByMetrics).isPositive();
        JsonNode counters = hedges().path("users").path("counters");
        assertThat(counters.path("hedgesWon").asLong()).isEqualTo((long) wonByMetrics);
        assertThat(counters.path("calls").asLong()).isGreaterThanOrEqualTo(6);
    }

    @Test
    void should_invoke_a_method_not_marked_idempotent_exactly_once_per_request() throws Exception {
        int before = orders.invocations();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = post("/orders/" + i);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("ordered " + i);
        }
        assertThat(orders.invocations() - before).isEqualTo(5);
        JsonNode counters = hedges().path("orders").path("counters");
        assertThat(counters.path("hedgesSent").asLong()).isZero();
        assertThat(counters.path("notHedgedNonIdempotent").asLong()).isGreaterThanOrEqualTo(5);
    }

    @Test
    void should_list_the_cassandra_session_and_the_grpc_method_executors_in_actuator_and_metrics() throws Exception {
        assertThat(session).isInstanceOf(HedgedCqlSession.class);
        long queries = CASSANDRA.productQueries();
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> r = get("/products/1");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("teapot: 9.99");
        }
        // the product reads went through the wrapped session to the simulated cluster; its delay is
        // adaptive (the p96 once 125 samples exist), so six reads are not hedged
        assertThat(CASSANDRA.productQueries() - queries).isEqualTo(6);

        JsonNode hedges = hedges();
        assertThat(hedges.path("cassandra").path("counters").path("calls").asLong())
                .isGreaterThanOrEqualTo(6);
        assertThat(hedges.path("cassandra").path("config").path("maxAttempts").asInt())
                .isEqualTo(3);
        assertThat(measurement("hedge.calls", "cassandra")).isGreaterThanOrEqualTo(6);

        // every first attempt of the prices service takes 500 ms; with half a hedge earned per call,
        // hedges sent after 50 ms answer at once
        JsonNode prices = hedges.path("grpc:shop.Prices/Get");
        assertThat(prices.path("config").path("idempotent").asBoolean()).isTrue();
        assertThat(prices.path("config").path("delay").asText()).isEqualTo("fixed 50ms");
        long won = prices.path("counters").path("hedgesWon").asLong();
        assertThat(won).isPositive();
        assertThat(measurement("hedge.hedges.won", "grpc:shop.Prices/Get")).isEqualTo((double) won);
        // hedge.instances.grpc only gives the gRPC methods their defaults: no executor of its own
        assertThat(hedges.has("grpc")).isFalse();
    }

    @Test
    void should_resolve_one_netty_version_when_spring_boot_the_cassandra_driver_and_grpc_netty_share_a_class_path() {
        Map<String, String> jars = new TreeMap<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Matcher m = NETTY_JAR.matcher(new File(entry).getName());
            if (m.matches()) {
                jars.put(m.group(1), m.group(2));
            }
        }
        // the driver needs handler, grpc-netty needs codec-http2: both are here, from one release
        assertThat(jars).containsKeys("netty-handler", "netty-codec-http2", "netty-transport");
        assertThat(new TreeSet<>(jars.values()))
                .as("Netty versions on the class path: %s", jars)
                .hasSize(1);
        // and what Netty itself reports from each jar's META-INF/io.netty.versions.properties
        Set<String> reported = new TreeSet<>();
        for (Version v : Version.identify().values()) {
            reported.add(v.artifactVersion());
        }
        assertThat(reported).isEqualTo(new TreeSet<>(jars.values()));
    }

    /** @return the {@code instances} object of {@code GET /actuator/hedges} */
    private JsonNode hedges() throws Exception {
        HttpResponse<String> r = get("/actuator/hedges");
        assertThat(r.statusCode()).isEqualTo(200);
        return JSON.readTree(r.body()).path("instances");
    }

    /** @return the first measurement of {@code GET /actuator/metrics/<meter>?tag=name:<name>} */
    private double measurement(String meter, String name) throws Exception {
        HttpResponse<String> r = get("/actuator/metrics/" + meter + "?tag=name:" + name);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body()).path("measurements").get(0).path("value").asDouble();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}

package io.github.hedge.spring.boot.webapp;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.spring.boot.autoconfigure.SimulatedCassandraAccess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example web application on a random port, driven by real HTTP requests: hedging happens
 * (metrics and the actuator say so), a method not marked idempotent runs exactly once per request,
 * and the Cassandra repository reads Simulacron through the hedged auto-configured session.
 */
@SpringBootTest(
        classes = ExampleWebApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "hedge.instances.backend.idempotent=true",
            "hedge.instances.backend.delay.fixed=50ms",
            "hedge.instances.backend.max-extra-load=0.5",
            "hedge.instances.orders.delay.fixed=1ms",
            "hedge.instances.orders.max-extra-load=0.5",
            "management.endpoints.web.exposure.include=hedges,metrics",
            "spring.cassandra.local-datacenter=dc1",
            "spring.cassandra.request.timeout=10s"
        })
class ExampleWebApplicationTest {
    private static final SimulatedCassandraAccess CASSANDRA = new SimulatedCassandraAccess();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @LocalServerPort
    int port;

    @Autowired
    ExampleWebApplication.SlowBackend backend;

    @Autowired
    CqlSession session;

    @DynamicPropertySource
    static void cassandra(DynamicPropertyRegistry registry) {
        registry.add("spring.cassandra.contact-points", CASSANDRA::contactPoint);
    }

    @AfterAll
    static void stopCassandra() throws Exception {
        CASSANDRA.close();
    }

    @Test
    void should_hedge_reads_and_show_the_hedges_won_in_metrics_and_actuator_when_requests_arrive_over_http()
            throws Exception {
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> r = get("/items/" + i);
            assertThat(r.statusCode()).isEqualTo(200);
            answers.add(r.body());
        }
        // odd invocations take 800 ms; once the budget has earned a hedge (0.5 per call), the hedge
        // after 50 ms (an even, fast invocation) answers instead
        assertThat(answers).anyMatch(a -> a.matches("item-\\d \\(invocation \\d*[02468]\\)"));

        JsonNode won = JSON.readTree(
                get("/actuator/metrics/hedge.hedges.won?tag=name:backend").body());
        double wonByMetrics = won.path("measurements").get(0).path("value").asDouble();
        assertThat(wonByMetrics).isPositive();

        JsonNode hedges = JSON.readTree(get("/actuator/hedges").body());
        JsonNode counters = hedges.path("instances").path("backend").path("counters");
        assertThat(counters.path("hedgesWon").asLong()).isEqualTo((long) wonByMetrics);
        assertThat(counters.path("calls").asLong()).isEqualTo(6);
    }

    @Test
    void should_invoke_a_method_not_marked_idempotent_exactly_once_per_request() throws Exception {
        int before = backend.writes.get();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = post("/orders/" + i);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("ordered " + i);
        }
        assertThat(backend.writes.get() - before).isEqualTo(5);
    }

    @Test
    void should_read_cassandra_through_the_hedged_auto_configured_session() throws Exception {
        assertThat(session).isInstanceOf(HedgedCqlSession.class);
        long calls = ((HedgedCqlSession) session).executor().stats().calls();
        HttpResponse<String> r = get("/users/1");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("none");
        assertThat(((HedgedCqlSession) session).executor().stats().calls()).isEqualTo(calls + 1);
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

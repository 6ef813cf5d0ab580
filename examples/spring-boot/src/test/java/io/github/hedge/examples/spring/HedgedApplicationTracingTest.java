package io.github.hedge.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application with Spring Boot's OpenTelemetry tracing on and an in-memory span exporter: a
 * hedged request over real HTTP shows up in its trace as the server's span, the hedged call's span
 * under it, and one span per attempt under the call, the winner and the cancelled loser marked.
 */
@SpringBootTest(
        classes = {HedgedApplication.class, HedgedApplicationTracingTest.Exporter.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "management.tracing.sampling.probability=1.0",
            "spring.cassandra.local-datacenter=dc1",
            "spring.cassandra.request.timeout=10s"
        })
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HedgedApplicationTracingTest {
    private static final SimulatedShopCassandra CASSANDRA = new SimulatedShopCassandra();
    private static final PricesServer PRICES = startPrices();

    /** The exporter Spring Boot's tracer provider sends every finished span to. */
    @TestConfiguration(proxyBeanMethods = false)
    static class Exporter {
        @Bean
        InMemorySpanExporter inMemorySpanExporter() {
            return InMemorySpanExporter.create();
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    InMemorySpanExporter spans;

    @Autowired
    SdkTracerProvider tracerProvider;

    @DynamicPropertySource
    static void backends(DynamicPropertyRegistry registry) {
        registry.add("spring.cassandra.contact-points", CASSANDRA::contactPoint);
        registry.add("shop.prices.target", PRICES::target);
    }

    @AfterAll
    static void stopBackends() throws Exception {
        try {
            PRICES.close();
        } finally {
            CASSANDRA.close();
        }
    }

    @Test
    void should_show_the_attempts_under_the_hedged_call_under_the_http_request_when_a_hedge_wins() throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/users/7"))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);

        // the server's span ends once the response is written, which may be after the client read it
        List<SpanData> trace = awaitTrace();
        SpanData server = trace.stream()
                .filter(s -> s.getParentSpanContext().isValid() == false)
                .findFirst()
                .orElseThrow();
        SpanData call = only(trace, s -> attribute(s, "hedge.attempts") != null);
        SpanData primary = only(trace, s -> "1".equals(attribute(s, "hedge.attempt")));
        SpanData hedge = only(trace, s -> "2".equals(attribute(s, "hedge.attempt")));

        assertThat(call.getParentSpanId()).isEqualTo(server.getSpanId());
        assertThat(primary.getParentSpanId()).isEqualTo(call.getSpanId());
        assertThat(hedge.getParentSpanId()).isEqualTo(call.getSpanId());
        assertThat(attribute(call, "hedge.executor")).isEqualTo("users");
        assertThat(attribute(call, "hedge.operation")).isEqualTo("UserService.find");
        assertThat(attribute(call, "hedge.winner")).isEqualTo("2");
        assertThat(attribute(call, "hedge.outcome")).isEqualTo("success");
        assertThat(attribute(primary, "hedge.outcome")).isEqualTo("lost-cancelled");
        assertThat(attribute(hedge, "hedge.outcome")).isEqualTo("won");
        assertThat(attribute(hedge, "hedge.reason")).isEqualTo("delay-elapsed");
        // no user data by default: the user id is in the URL, never in a hedge span
        for (SpanData s : List.of(call, primary, hedge)) {
            assertThat(s.getAttributes().asMap().values())
                    .noneMatch(v -> String.valueOf(v).contains("7"));
        }
    }

    private List<SpanData> awaitTrace() throws InterruptedException {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            tracerProvider.forceFlush().join(10, TimeUnit.SECONDS);
            List<SpanData> finished = spans.getFinishedSpanItems();
            String traceId = finished.stream()
                    .filter(s ->
                            "users".equals(attribute(s, "hedge.executor")) && attribute(s, "hedge.attempts") != null)
                    .map(SpanData::getTraceId)
                    .findFirst()
                    .orElse(null);
            if (traceId != null) {
                List<SpanData> trace = finished.stream()
                        .filter(s -> s.getTraceId().equals(traceId))
                        .collect(Collectors.toList());
                if (trace.stream().anyMatch(s -> !s.getParentSpanContext().isValid())) {
                    return trace;
                }
            }
            if (System.nanoTime() > giveUp) {
                throw new AssertionError("no complete trace of the hedged request; spans: " + describe(finished));
            }
            Thread.sleep(50);
        }
    }

    private static SpanData only(List<SpanData> trace, java.util.function.Predicate<SpanData> p) {
        List<SpanData> found = trace.stream().filter(p).collect(Collectors.toList());
        assertThat(found).as("spans of the trace: %s", describe(trace)).hasSize(1);
        return found.get(0);
    }

    private static String attribute(SpanData span, String key) {
        return span.getAttributes().asMap().entrySet().stream()
                .filter(e -> e.getKey().getKey().equals(key))
                .map(e -> String.valueOf(e.getValue()))
                .findFirst()
                .orElse(null);
    }

    private static String describe(List<SpanData> spans) {
        return spans.stream()
                .map(s -> s.getName() + "(" + s.getSpanId() + "<-" + s.getParentSpanId() + " "
                        + s.getAttributes().asMap() + ")")
                .collect(Collectors.joining("; "));
    }

    private static PricesServer startPrices() {
        try {
            return new PricesServer();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}

package io.github.hedge.spring.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.spring.boot.autoconfigure.HedgeAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeEndpointAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import io.github.hedge.spring.boot.autoconfigure.InvalidHedgePropertyException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.invoke.convert.ConversionServiceParameterValueMapper;
import org.springframework.boot.actuate.endpoint.web.EndpointMediaTypes;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.WebOperation;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpointDiscoverer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class HedgesEndpointTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(HedgeAutoConfiguration.class, HedgeEndpointAutoConfiguration.class))
            .withPropertyValues(
                    "hedge.defaults.max-extra-load=0.1",
                    "hedge.instances.user-reads.idempotent=true",
                    "hedge.instances.user-reads.delay.fixed=1s", // long: a loaded machine sends no hedge for a trivial
                    // call
                    "hedge.instances.user-reads.timeout=2s",
                    "hedge.instances.user-writes.max-attempts=1");

    private final ApplicationContextRunner exposed =
            runner.withPropertyValues("management.endpoints.web.exposure.include=hedges");

    @Test
    void should_create_the_endpoint_when_it_is_exposed() {
        exposed.run(ctx -> assertThat(ctx).hasSingleBean(HedgesEndpoint.class));
    }

    @Test
    void should_not_create_the_endpoint_when_it_is_not_exposed() {
        runner.run(ctx -> assertThat(ctx).doesNotHaveBean(HedgesEndpoint.class));
    }

    @Test
    void should_not_create_the_endpoint_when_actuator_is_absent() {
        exposed.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx).doesNotHaveBean(HedgesEndpoint.class);
                });
    }

    @Test
    void should_list_config_delay_latency_budget_and_counters_of_each_instance_when_read() {
        exposed.run(ctx -> {
            HedgedExecutor reads = ctx.getBean(HedgeInstances.class).executor("user-reads");
            for (int i = 0; i < 3; i++) {
                reads.execute(() -> "ok");
            }
            reads.execute(CallOptions.nonIdempotent(), () -> "once");

            JsonNode json = new ObjectMapper()
                    .valueToTree(ctx.getBean(HedgesEndpoint.class).hedges());
            JsonNode r = json.path("instances").path("user-reads");
            assertThat(json.path("instances").fieldNames()).toIterable().containsExactly("user-reads", "user-writes");
            assertThat(r.path("config").path("delay").asText()).isEqualTo("fixed 1s");
            assertThat(r.path("config").path("maxAttempts").asInt()).isEqualTo(2);
            assertThat(r.path("config").path("maxExtraLoad").asDouble()).isEqualTo(0.1);
            assertThat(r.path("config").path("timeout").asText()).isEqualTo("2s");
            assertThat(r.path("config").path("idempotent").asBoolean()).isTrue();
            assertThat(r.path("currentDelayMs").asDouble()).isEqualTo(1000.0);
            assertThat(r.path("counters").path("calls").asLong()).isEqualTo(4);
            assertThat(r.path("counters").path("successes").asLong()).isEqualTo(4);
            assertThat(r.path("counters").path("hedgesSent").asLong()).isZero();
            assertThat(r.path("counters").path("notHedgedNonIdempotent").asLong())
                    .isEqualTo(1);
            assertThat(r.path("budget").path("ratio").asDouble()).isEqualTo(0.1);
            assertThat(r.path("budget").path("primariesInWindow").asLong())
                    .as("only hedgeable calls count as primaries")
                    .isEqualTo(3);
            assertThat(r.path("budget").has("remaining")).isTrue();
            assertThat(r.path("latency").has("count")).isTrue();
            assertThat(r.path("latency").has("p99Ms")).isTrue();
            // the savings window refreshes lazily (once a second), so its counts may still be 0 here
            assertThat(r.path("saved").has("calls")).isTrue();
            assertThat(r.path("saved").has("hedgedP99Ms")).isTrue();
            assertThat(r.path("saved").has("unhedgedP99Ms")).isTrue();
            assertThat(r.path("saved").path("censoredPrimaries").asLong()).isZero();
            assertThat(r.path("saved").path("extraLoad").asDouble()).isZero();
            assertThat(r.path("saved").path("summary").asText()).contains("p99").contains("extra");

            JsonNode w = json.path("instances").path("user-writes");
            assertThat(w.path("config").path("idempotent").asBoolean()).isFalse();
            assertThat(w.path("config").path("delay").asText())
                    .isEqualTo("percentile 0.9 in [0ms, 10s] with budget feedback");
            assertThat(w.path("currentDelayMs").isNull())
                    .as("no hedge before the instance's first answer")
                    .isTrue();
        });
    }

    @Test
    void should_serve_read_and_write_operations_through_actuator_web_endpoint_discovery() {
        exposed.run(ctx -> {
            WebEndpointDiscoverer discoverer = new WebEndpointDiscoverer(
                    ctx,
                    new ConversionServiceParameterValueMapper(),
                    EndpointMediaTypes.DEFAULT,
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of());
            ExposableWebEndpoint endpoint = discoverer.getEndpoints().stream()
                    .filter(e -> e.getEndpointId().equals(EndpointId.of("hedges")))
                    .findFirst()
                    .orElseThrow();
            assertThat(endpoint.getOperations())
                    .extracting(o -> o.getRequestPredicate().getHttpMethod() + " "
                            + o.getRequestPredicate().getPath())
                    .containsExactlyInAnyOrder("GET hedges", "GET hedges/{name}", "POST hedges/{name}");
            WebOperation write = endpoint.getOperations().stream()
                    .filter(o -> o.getType() == OperationType.WRITE)
                    .findFirst()
                    .orElseThrow();
            // what POST /actuator/hedges/user-reads with {"fixed":"5ms","maxExtraLoad":0.02} becomes
            Object written = write.invoke(new InvocationContext(
                    SecurityContext.NONE, Map.of("name", "user-reads", "fixed", "5ms", "maxExtraLoad", 0.02)));
            JsonNode json = new ObjectMapper().valueToTree(written);
            assertThat(json.path("config").path("delay").asText()).isEqualTo("fixed 5ms");
            assertThat(json.path("config").path("maxExtraLoad").asDouble()).isEqualTo(0.02);

            WebOperation readOne = endpoint.getOperations().stream()
                    .filter(o -> o.getRequestPredicate().getPath().equals("hedges/{name}")
                            && o.getType() == OperationType.READ)
                    .findFirst()
                    .orElseThrow();
            Object read = readOne.invoke(new InvocationContext(SecurityContext.NONE, Map.of("name", "user-reads")));
            assertThat(new ObjectMapper()
                            .valueToTree(read)
                            .path("currentDelayMs")
                            .asDouble())
                    .isEqualTo(5.0);
        });
    }

    @Test
    void should_return_null_when_the_instance_does_not_exist() {
        exposed.run(ctx ->
                assertThat(ctx.getBean(HedgesEndpoint.class).instance("nope")).isNull());
    }

    @Test
    void should_change_the_delay_and_budget_without_restart_when_written() {
        exposed.run(ctx -> {
            HedgesEndpoint endpoint = ctx.getBean(HedgesEndpoint.class);
            HedgesEndpoint.InstanceDescriptor after =
                    endpoint.update("user-reads", null, Duration.ofMillis(5), 0.02, 3);
            assertThat(after.config().delay()).isEqualTo("fixed 5ms");
            assertThat(after.config().maxExtraLoad()).isEqualTo(0.02);
            assertThat(after.config().maxAttempts()).isEqualTo(3);
            assertThat(after.currentDelayMs()).isEqualTo(5.0);
            assertThat(after.currentDelaySource()).isEqualTo("policy");
            assertThat(after.budget().ratio()).isEqualTo(0.02);

            HedgesEndpoint.InstanceDescriptor adaptive = endpoint.update("user-reads", 0.99, null, null, null);
            assertThat(adaptive.config().delay()).isEqualTo("percentile 0.99 in [0ms, 10s]");
        });
    }

    @Test
    void should_reject_an_out_of_range_write_as_a_bad_request_naming_the_property() {
        exposed.run(ctx -> {
            HedgesEndpoint endpoint = ctx.getBean(HedgesEndpoint.class);
            assertThatThrownBy(() -> endpoint.update("user-reads", 1.5, null, null, null))
                    .isInstanceOf(InvalidEndpointRequestException.class)
                    .hasMessage("hedge.instances.user-reads.delay.percentile must be in (0, 1), was 1.5")
                    .hasCauseInstanceOf(InvalidHedgePropertyException.class);
            assertThatThrownBy(() -> endpoint.update("user-reads", 0.9, Duration.ofMillis(1), null, null))
                    .isInstanceOf(InvalidEndpointRequestException.class)
                    .hasMessage("hedge.instances.user-reads.delay.* must be one of percentile or fixed,"
                            + " was percentile and fixed");
            assertThat(endpoint.instance("user-reads").config().delay()).isEqualTo("fixed 1s");
        });
    }
}

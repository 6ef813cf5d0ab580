package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.grpc.HedgeLoadBalancerProvider;
import io.github.hedge.grpc.HedgingClientInterceptor;
import io.github.hedge.spring.boot.actuate.HedgesEndpoint;
import io.grpc.ClientInterceptor;
import io.grpc.LoadBalancerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** hedge.grpc.* against a real grpc-netty server on 127.0.0.1. */
class HedgeGrpcAutoConfigurationTest {
    private static EchoServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HedgeAutoConfiguration.class, HedgeGrpcAutoConfiguration.class));

    @BeforeAll
    static void startServer() throws Exception {
        server = new EchoServer();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @BeforeEach
    void reset() {
        server.primaryDelayMs = 500;
        server.reads.set(0);
        server.writes.set(0);
    }

    @Test
    void should_hedge_a_method_declared_idempotent_by_properties_on_a_channel_the_application_builds() {
        runner.withPropertyValues(
                        "hedge.grpc.methods[test.Echo/Read].idempotent=true",
                        "hedge.grpc.methods[test.Echo/Read].delay.fixed=20ms",
                        "hedge.instances.grpc.max-extra-load=0.5")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    HedgeGrpcChannelConfigurer configurer = ctx.getBean(HedgeGrpcChannelConfigurer.class);
                    assertThat(configurer.loadBalancingPolicy()).contains(HedgeLoadBalancerProvider.POLICY_NAME);
                    ManagedChannel channel = configurer
                            .configure(ManagedChannelBuilder.forAddress("127.0.0.1", server.port())
                                    .usePlaintext())
                            .build();
                    try {
                        // a primary answers after 500 ms, a hedge (sent after 20 ms) at once; the budget
                        // the interceptor builds starts with HedgeBudget.coldStartTokens(0.5) = 20 tokens,
                        // so every call, the first included, is answered by its hedge
                        java.util.List<String> replies = new java.util.ArrayList<>();
                        for (int i = 0; i < 4; i++) {
                            replies.add(EchoServer.call(channel, EchoServer.READ, "x"));
                        }
                        assertThat(replies).containsOnly("attempt 2");
                        HedgingClientInterceptor interceptor = ctx.getBean(HedgingClientInterceptor.class);
                        assertThat(interceptor
                                        .executor("test.Echo/Read")
                                        .orElseThrow()
                                        .stats()
                                        .hedgesWon())
                                .isEqualTo(replies.stream()
                                        .filter("attempt 2"::equals)
                                        .count());
                    } finally {
                        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                    }
                });
    }

    @Test
    @Timeout(120) // a hung call fails the test instead of the build
    void should_hedge_each_call_whose_primary_hits_the_slow_backend_when_the_configured_channel_is_new()
            throws Exception {
        try (EchoServer b0 = new EchoServer("b0");
                EchoServer b1 = new EchoServer("b1");
                EchoServer b2 = new EchoServer("b2")) {
            // b0 answers the calls under test after 1 s, the others after 20 ms; "first" is fast everywhere
            b0.getDelayMs = request -> request.equals("first") ? 20 : 1_000;
            b1.getDelayMs = request -> 20;
            b2.getDelayMs = request -> 20;
            // only the method's idempotence is set: delay, budget and attempts are the defaults
            runner.withPropertyValues("hedge.grpc.methods[test.Echo/Get].idempotent=true")
                    .run(ctx -> {
                        HedgingClientInterceptor interceptor = ctx.getBean(HedgingClientInterceptor.class);
                        assertThat(interceptor.defaults().delayPolicy())
                                .as("the starter's default delay is a percentile, which warms up")
                                .isInstanceOf(PercentileDelay.class);
                        assertThat(interceptor.budget().initialTokens())
                                .isEqualTo(HedgeBudget.coldStartTokens(
                                        interceptor.defaults().budgetRatio()))
                                .isEqualTo(20);
                        ManagedChannel channel = ctx.getBean(HedgeGrpcChannelConfigurer.class)
                                .configure(ManagedChannelBuilder.forTarget(EchoServer.target(b0, b1, b2))
                                        .usePlaintext())
                                .build();
                        Map<String, String> replies = new LinkedHashMap<>();
                        try {
                            // fast answers first, until one is a sample: before any sample nothing is
                            // hedged, and a backend's first answer measured its connection
                            EchoServer.call(channel, EchoServer.GET, "first");
                            HedgedExecutor get =
                                    interceptor.executor("test.Echo/Get").orElseThrow();
                            for (int i = 0; i < 20 && get.latencyTracker().sampleCount() == 0; i++) {
                                EchoServer.call(channel, EchoServer.GET, "first");
                            }
                            assertThat(get.latencyTracker().sampleCount()).isPositive();
                            // fewer calls than the budget's 20 starting tokens: no hedge can be denied
                            for (int i = 0; i < 20; i++) {
                                String request = "call-" + i;
                                replies.put(request, EchoServer.call(channel, EchoServer.GET, request));
                            }
                            // while the channel is open, so only the hedge that won can have cancelled them
                            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(b0.gets)
                                    .filteredOn(e -> !e.request.equals("first"))
                                    .as("the slow backend answered none, each attempt there was cancelled")
                                    .allMatch(e -> e.cancelled && !e.answered));
                        } finally {
                            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                        }

                        // counted at the servers: which backend ran each primary, which answered
                        List<String> slowPrimaries = b0.gets.stream()
                                .filter(e -> e.attempt == 1 && !e.request.equals("first"))
                                .map(e -> e.request)
                                .toList();
                        assertThat(slowPrimaries)
                                .as("round robin sends the slow backend some primaries")
                                .isNotEmpty();
                        for (String request : slowPrimaries) {
                            assertThat(replies.get(request))
                                    .as("%s, whose primary went to the slow backend", request)
                                    .isIn("b1 attempt 2", "b2 attempt 2");
                        }
                        assertThat(replies.values()).noneMatch(r -> r.startsWith("b0"));
                        assertThat(Stream.of(b1, b2)
                                        .flatMap(b -> b.gets.stream())
                                        .filter(e -> e.answered)
                                        .map(e -> e.request))
                                .as("the fast backends answered every call under test")
                                .containsAll(replies.keySet());

                        HedgedExecutor executor =
                                interceptor.executor("test.Echo/Get").orElseThrow();
                        HedgeStats stats = executor.stats();
                        assertThat(stats.hedgesWon()).isGreaterThanOrEqualTo(slowPrimaries.size());
                        assertThat(stats.budgetDenied()).isZero();
                        // long before the p95 could be trusted: that needs 100 samples of one backend
                        assertThat(executor.latencyTracker().sampleCount()).isLessThan(100);
                    });
        }
    }

    @Test
    void should_list_each_method_executor_in_the_registry_the_endpoint_and_the_metrics_under_the_instance_name() {
        runner.withConfiguration(AutoConfigurations.of(
                        HedgeMetricsAutoConfiguration.class, HedgeEndpointAutoConfiguration.class))
                .withBean(SimpleMeterRegistry.class)
                .withPropertyValues(
                        "management.endpoints.web.exposure.include=hedges",
                        "hedge.grpc.methods[test.Echo/Read].idempotent=true",
                        "hedge.grpc.methods[test.Echo/Read].delay.fixed=20ms",
                        "hedge.instances.grpc.max-extra-load=0.5")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    ManagedChannel channel = ctx.getBean(HedgeGrpcChannelConfigurer.class)
                            .configure(ManagedChannelBuilder.forAddress("127.0.0.1", server.port())
                                    .usePlaintext())
                            .build();
                    try {
                        for (int i = 0; i < 4; i++) {
                            EchoServer.call(channel, EchoServer.READ, "x");
                        }
                        EchoServer.call(channel, EchoServer.WRITE, "w");
                    } finally {
                        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                    }
                    HedgingClientInterceptor interceptor = ctx.getBean(HedgingClientInterceptor.class);
                    HedgedExecutorRegistry registry =
                            ctx.getBean(HedgeInstances.class).registry();
                    HedgedExecutor read = registry.find("grpc:test.Echo/Read").orElseThrow();
                    assertThat(interceptor.executor("test.Echo/Read")).containsSame(read);
                    assertThat(registry.find("grpc:test.Echo/Write")).isPresent();
                    long won = read.stats().hedgesWon();
                    assertThat(won).isPositive(); // a primary takes 500 ms, a hedge 20 ms later answers at once

                    MeterRegistry meters = ctx.getBean(MeterRegistry.class);
                    assertThat(meters.get("hedge.hedges.won")
                                    .tag("name", "grpc:test.Echo/Read")
                                    .counter()
                                    .count())
                            .isEqualTo((double) won);
                    assertThat(meters.get("hedge.calls")
                                    .tag("name", "grpc:test.Echo/Write")
                                    .counters())
                            .isNotEmpty();

                    HedgesEndpoint endpoint = ctx.getBean(HedgesEndpoint.class);
                    assertThat(endpoint.hedges().instances())
                            .containsKeys("grpc:test.Echo/Read", "grpc:test.Echo/Write");
                    HedgesEndpoint.InstanceDescriptor d = endpoint.instance("grpc:test.Echo/Read");
                    assertThat(d.counters().calls()).isEqualTo(4);
                    assertThat(d.counters().hedgesWon()).isEqualTo(won);
                    assertThat(d.config().idempotent()).isTrue();
                    assertThat(d.config().maxExtraLoad()).isEqualTo(0.5);
                    assertThat(d.config().delay()).isEqualTo("fixed 20ms");
                    assertThat(endpoint.instance("grpc:test.Echo/Write")
                                    .config()
                                    .idempotent())
                            .isFalse();
                    // configured by hedge.grpc.*, so the endpoint cannot change it
                    assertThatThrownBy(() -> endpoint.update("grpc:test.Echo/Read", null, null, null, 3))
                            .isInstanceOf(InvalidEndpointRequestException.class)
                            .hasMessageContaining("hedge.grpc.methods");
                    assertThat(registry.find("grpc:test.Echo/Read")).containsSame(read);

                    // hedge.instances.grpc is the methods' template: no executor of its own, no change at runtime
                    assertThat(registry.find("grpc")).isEmpty();
                    assertThat(endpoint.hedges().instances()).doesNotContainKey("grpc");
                    assertThat(endpoint.instance("grpc")).isNull();
                    assertThatThrownBy(() -> endpoint.update("grpc", null, null, 0.1, null))
                            .isInstanceOf(InvalidEndpointRequestException.class)
                            .hasMessage("hedge instance 'grpc' is read by hedge.grpc when the application starts;"
                                    + " change hedge.instances.grpc and restart");
                    assertThat(meters.find("hedge.calls").tag("name", "grpc").meters())
                            .isEmpty();
                });
    }

    @Test
    void should_invoke_a_method_not_marked_idempotent_exactly_once() {
        runner.withPropertyValues("hedge.grpc.methods[test.Echo/*].delay.fixed=1ms")
                .run(ctx -> {
                    ManagedChannel channel = ctx.getBean(HedgeGrpcChannelConfigurer.class)
                            .configure(ManagedChannelBuilder.forAddress("127.0.0.1", server.port())
                                    .usePlaintext())
                            .build();
                    try {
                        assertThat(EchoServer.call(channel, EchoServer.WRITE, "w"))
                                .isEqualTo("written w");
                        assertThat(server.writes.get()).isEqualTo(1);
                    } finally {
                        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                    }
                });
    }

    @Test
    void should_bind_the_interceptor_settings_from_properties() {
        runner.withPropertyValues(
                        "hedge.grpc.max-hedged-request-bytes=1024",
                        "hedge.grpc.non-fatal-codes=unavailable,resource_exhausted",
                        "hedge.grpc.load-balancing=false",
                        "hedge.instances.grpc.max-attempts=3")
                .run(ctx -> {
                    HedgingClientInterceptor interceptor = ctx.getBean(HedgingClientInterceptor.class);
                    assertThat(interceptor.maxHedgedRequestBytes()).isEqualTo(1024);
                    assertThat(interceptor.nonFatalCodes())
                            .containsExactlyInAnyOrder(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED);
                    assertThat(interceptor.defaults().maxAttempts()).isEqualTo(3);
                    assertThat(ctx.getBean(HedgeGrpcChannelConfigurer.class).loadBalancingPolicy())
                            .isEmpty();
                    assertThat(LoadBalancerRegistry.getDefaultRegistry()
                                    .getProvider(HedgeLoadBalancerProvider.POLICY_NAME))
                            .isNotNull();
                });
    }

    @Test
    void should_back_off_when_hedge_grpc_is_not_on_the_class_path() {
        runner.withClassLoader(new FilteredClassLoader(HedgingClientInterceptor.class))
                .run(ctx -> assertThat(ctx)
                        .hasNotFailed()
                        .doesNotHaveBean(ClientInterceptor.class)
                        .doesNotHaveBean(HedgeGrpcChannelConfigurer.class));
    }

    @Test
    void should_back_off_when_disabled() {
        runner.withPropertyValues("hedge.grpc.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean(HedgingClientInterceptor.class));
    }

    @Test
    void should_use_the_interceptor_the_application_defines() {
        runner.withUserConfiguration(UserInterceptor.class).run(ctx -> {
            assertThat(ctx).hasSingleBean(HedgingClientInterceptor.class);
            assertThat(ctx.getBean(HedgeGrpcChannelConfigurer.class).interceptor())
                    .isSameAs(ctx.getBean("myInterceptor"));
        });
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "hedge.grpc.methods[test.Echo/Read].max-attempts=0"
                        + "|hedge.grpc.methods[test.Echo/Read].max-attempts must be in [1, 16], was 0",
                "hedge.grpc.methods[test.Echo/Read].delay.percentile=1.5"
                        + "|hedge.grpc.methods[test.Echo/Read].delay.percentile must be in (0, 1), was 1.5",
                "hedge.grpc.methods[test.Echo].idempotent=true"
                        + "|hedge.grpc.methods must be keys \"pkg.Service/Method\", \"pkg.Service/*\" or \"*\","
                        + " was test.Echo",
                "hedge.grpc.non-fatal-codes=SLOW"
                        + "|hedge.grpc.non-fatal-codes must be gRPC status code names other than OK, was SLOW",
                "hedge.grpc.max-hedged-request-bytes=-1"
                        + "|hedge.grpc.max-hedged-request-bytes must be in [0, 2147483647], was -1",
                "hedge.instances.grpc.max-extra-load=0|hedge.instances.grpc.max-extra-load must be in (0, 1), was 0.0",
            })
    void should_fail_the_start_naming_property_range_and_value_when_a_setting_is_invalid(
            String property, String expected) {
        runner.withPropertyValues(property).run(ctx -> {
            assertThat(ctx).hasFailed();
            FailureAnalysis analysis = new HedgePropertiesFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(analysis).isNotNull();
            assertThat(analysis.getDescription()).isEqualTo("Invalid hedge configuration: " + expected + ".");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserInterceptor {
        @Bean
        HedgingClientInterceptor myInterceptor() {
            return HedgingClientInterceptor.ofDefaults();
        }
    }
}

package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.core.observation.HedgeObservations;
import io.github.hedge.grpc.HedgingClientInterceptor;
import io.github.hedge.spring.annotation.Hedged;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** hedge.observations.*: the observation registry reaches @Hedged instances and the gRPC interceptor. */
@Timeout(120)
class HedgeObservationAutoConfigurationTest {
    private static EchoServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    AopAutoConfiguration.class,
                    HedgeObservationAutoConfiguration.class,
                    HedgeAutoConfiguration.class,
                    HedgeGrpcAutoConfiguration.class));

    @BeforeAll
    static void startServer() throws Exception {
        server = new EchoServer();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    /** Records the observations started and stopped. */
    static final class Recorder implements ObservationHandler<Observation.Context> {
        final Queue<Observation.Context> started = new ConcurrentLinkedQueue<>();
        final Set<Observation.Context> stopped = ConcurrentHashMap.newKeySet();

        @Override
        public void onStart(Observation.Context context) {
            started.add(context);
        }

        @Override
        public void onStop(Observation.Context context) {
            stopped.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        List<Observation.Context> named(String name) {
            return started.stream().filter(c -> name.equals(c.getName())).toList();
        }
    }

    static String key(Observation.Context c, String key) {
        var kv = c.getLowCardinalityKeyValue(key);
        return kv == null ? null : kv.getValue();
    }

    @Configuration(proxyBeanMethods = false)
    static class Observed {
        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean
        ObservationRegistry observationRegistry(Recorder recorder) {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(recorder);
            return registry;
        }

        @Bean
        Lookup lookup(ObservationRegistry registry) {
            return new Lookup(registry);
        }
    }

    /** A blocking method whose first attempt hangs until interrupted and whose hedge answers at once. */
    public static class Lookup {
        final ObservationRegistry registry;
        final AtomicInteger attempts = new AtomicInteger();
        final Queue<Optional<Observation>> current = new ConcurrentLinkedQueue<>();
        final CountDownLatch primaryInterrupted = new CountDownLatch(1);

        Lookup(ObservationRegistry registry) {
            this.registry = registry;
        }

        @Hedged(value = "lookup", idempotent = Hedged.Idempotence.IDEMPOTENT)
        public String find(String key) {
            current.add(Optional.ofNullable(registry.getCurrentObservation()));
            if (attempts.incrementAndGet() == 1) {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    primaryInterrupted.countDown();
                    return "interrupted";
                }
            }
            return "value";
        }

        /** @return the current observation each attempt saw (the bean is proxied: read through a method) */
        public Queue<Optional<Observation>> current() {
            return current;
        }

        /** @return counted down when the losing primary is interrupted */
        public CountDownLatch primaryInterrupted() {
            return primaryInterrupted;
        }
    }

    @Test
    void should_record_the_call_and_attempt_tree_of_a_hedged_method_when_an_observation_registry_exists()
            throws Exception {
        runner.withUserConfiguration(Observed.class)
                .withPropertyValues("hedge.instances.lookup.delay.fixed=20ms")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Lookup lookup = ctx.getBean(Lookup.class);
                    Recorder recorded = ctx.getBean(Recorder.class);

                    assertThat(lookup.find("user-secret-42")).isEqualTo("value");
                    assertThat(lookup.primaryInterrupted().await(10, TimeUnit.SECONDS))
                            .as("the losing primary was interrupted")
                            .isTrue();

                    List<Observation.Context> calls = recorded.named(HedgeObservations.CALL_NAME);
                    assertThat(calls).hasSize(1);
                    Observation.Context call = calls.get(0);
                    assertThat(key(call, "hedge.executor")).isEqualTo("lookup");
                    assertThat(key(call, "hedge.winner")).isEqualTo("2");
                    List<Observation.Context> attempts = recorded.named(HedgeObservations.ATTEMPT_NAME);
                    assertThat(attempts)
                            .extracting(a -> key(a, "hedge.attempt") + ":" + key(a, "hedge.outcome"))
                            .containsExactlyInAnyOrder("1:lost-cancelled", "2:won");
                    assertThat(attempts)
                            .allSatisfy(a -> assertThat(a.getParentObservation().getContextView())
                                    .isSameAs(call));
                    // the method body ran inside its attempt's observation, on the attempt thread
                    assertThat(lookup.current())
                            .extracting(o -> o.map(Observation::getContextView).orElse(null))
                            .containsExactlyInAnyOrderElementsOf(attempts);
                    assertThat(recorded.stopped).containsAll(recorded.started);
                    for (Observation.Context c : recorded.started) {
                        assertThat(c.getAllKeyValues())
                                .noneMatch(kv -> kv.getValue().contains("secret"));
                    }
                });
    }

    @Test
    void should_observe_the_grpc_interceptors_calls_when_an_observation_registry_exists() {
        server.primaryDelayMs = 500;
        runner.withUserConfiguration(Observed.class)
                .withPropertyValues(
                        "hedge.grpc.methods[test.Echo/Read].idempotent=true",
                        "hedge.grpc.methods[test.Echo/Read].delay.fixed=20ms")
                .run(ctx -> {
                    HedgingClientInterceptor interceptor = ctx.getBean(HedgingClientInterceptor.class);
                    assertThat(interceptor.defaults().callDecorator()).isSameAs(ctx.getBean(HedgeObservations.class));
                    ManagedChannel channel = ctx.getBean(HedgeGrpcChannelConfigurer.class)
                            .configure(ManagedChannelBuilder.forAddress("127.0.0.1", server.port())
                                    .usePlaintext())
                            .build();
                    try {
                        assertThat(EchoServer.call(channel, EchoServer.READ, "x"))
                                .isEqualTo("attempt 2");
                    } finally {
                        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                    }
                    Recorder recorded = ctx.getBean(Recorder.class);
                    assertThat(recorded.named(HedgeObservations.CALL_NAME))
                            .singleElement()
                            .satisfies(c -> assertThat(key(c, "hedge.executor")).isEqualTo("grpc:test.Echo/Read"));
                    assertThat(recorded.named(HedgeObservations.ATTEMPT_NAME))
                            .extracting(a -> key(a, "hedge.attempt") + ":" + key(a, "hedge.outcome"))
                            .containsExactlyInAnyOrder("1:lost-cancelled", "2:won");
                });
    }

    @Test
    void should_leave_every_instance_unobserved_when_observations_are_disabled() {
        runner.withUserConfiguration(Observed.class)
                .withPropertyValues("hedge.observations.enabled=false")
                .run(ctx -> {
                    assertThat(ctx).doesNotHaveBean(HedgeObservations.class);
                    assertThat(ctx.getBean(HedgeInstances.class)
                                    .executor("lookup")
                                    .config()
                                    .callDecorator())
                            .isNull();
                    assertThat(ctx.getBean(HedgingClientInterceptor.class)
                                    .defaults()
                                    .callDecorator())
                            .isNull();
                });
    }

    @Test
    void should_set_the_observations_on_every_instance_with_targets_only_when_opted_in() {
        runner.withUserConfiguration(Observed.class)
                .withPropertyValues("hedge.observations.include-targets=true")
                .run(ctx -> {
                    HedgeObservations observations = ctx.getBean(HedgeObservations.class);
                    assertThat(observations.registry()).isSameAs(ctx.getBean(ObservationRegistry.class));
                    assertThat(ctx.getBean(HedgeInstances.class)
                                    .executor("any")
                                    .config()
                                    .callDecorator())
                            .isSameAs(observations);
                    assertThat(observations.includesTargets()).isTrue();
                });
    }

    @Test
    void should_start_without_observations_when_there_is_no_registry_or_no_micrometer_observation() {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed().doesNotHaveBean(HedgeObservations.class);
            assertThat(ctx.getBean(HedgedExecutorRegistry.class)).isNotNull();
        });
        runner.withUserConfiguration(Observed.class)
                .withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(HedgeObservations.class));
    }
}

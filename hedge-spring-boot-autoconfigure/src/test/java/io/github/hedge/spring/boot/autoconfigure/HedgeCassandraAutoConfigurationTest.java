package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.specex.SpeculativeExecutionPolicy;
import io.github.hedge.cassandra.HedgeLoadBalancingPolicy;
import io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.spring.boot.actuate.HedgesEndpoint;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.cassandra.CassandraAutoConfiguration;
import org.springframework.boot.autoconfigure.cassandra.DriverConfigLoaderBuilderCustomizer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** hedge.cassandra.* against Spring Boot's Cassandra auto-configuration and a simulated cluster. */
class HedgeCassandraAutoConfigurationTest {
    private static SimulatedCassandra cassandra;

    private ApplicationContextRunner runner;

    @BeforeAll
    static void startCluster() {
        cassandra = new SimulatedCassandra();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        cassandra.close();
    }

    @BeforeEach
    void setUp() {
        for (int i = 0; i < 3; i++) {
            cassandra.heal(i);
        }
        cassandra.clearLogs();
        runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        HedgeAutoConfiguration.class,
                        HedgeCassandraAutoConfiguration.class,
                        CassandraAutoConfiguration.class))
                .withPropertyValues(
                        "spring.cassandra.contact-points=" + cassandra.contactPoint(),
                        "spring.cassandra.local-datacenter=dc1",
                        "spring.cassandra.request.timeout=10s");
    }

    @Test
    void should_inject_a_hedged_session_that_hedges_around_a_slow_replica_when_the_mode_is_unset() {
        runner.withPropertyValues(
                        "hedge.instances.cassandra.delay.fixed=20ms",
                        "hedge.instances.cassandra.max-extra-load=0.5",
                        "hedge.instances.cassandra.max-attempts=3")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    CqlSession session = ctx.getBean(CqlSession.class);
                    assertThat(session).isInstanceOf(HedgedCqlSession.class);
                    HedgedCqlSession hedged = (HedgedCqlSession) session;
                    assertThat(hedged.executor().name()).isEqualTo("cassandra");

                    cassandra.slow(0, 3_000);
                    // a primary lands on the slow node about every third call (the statement has no
                    // routing key, so any coordinator serves it); its hedge then wins after 20 ms
                    int calls = 0;
                    while (calls < 30 && hedged.executor().stats().hedgesWon() == 0) {
                        session.execute(SimpleStatement.newInstance(SimulatedCassandra.SELECT)
                                .setIdempotent(true));
                        calls++;
                    }
                    HedgeStats stats = hedged.executor().stats();
                    assertThat(stats.successes()).isEqualTo(calls);
                    assertThat(stats.hedgesWon()).isPositive();
                    assertThat(stats.hedgesWon()).isLessThanOrEqualTo(stats.hedgesSent());
                });
    }

    @Test
    void should_record_the_sessions_calls_as_observations_when_an_observation_registry_bean_exists() {
        java.util.Queue<io.micrometer.observation.Observation.Context> started =
                new java.util.concurrent.ConcurrentLinkedQueue<>();
        io.micrometer.observation.ObservationRegistry registry = io.micrometer.observation.ObservationRegistry.create();
        registry.observationConfig().observationHandler(new io.micrometer.observation.ObservationHandler<>() {
            @Override
            public void onStart(io.micrometer.observation.Observation.Context c) {
                started.add(c);
            }

            @Override
            public boolean supportsContext(io.micrometer.observation.Observation.Context c) {
                return true;
            }
        });
        runner.withConfiguration(AutoConfigurations.of(HedgeObservationAutoConfiguration.class))
                .withBean(io.micrometer.observation.ObservationRegistry.class, () -> registry)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    HedgedCqlSession hedged = (HedgedCqlSession) ctx.getBean(CqlSession.class);
                    assertThat(hedged.executor().config().callDecorator())
                            .isSameAs(ctx.getBean(io.github.hedge.core.observation.HedgeObservations.class));
                    hedged.execute(SimpleStatement.newInstance(SimulatedCassandra.SELECT)
                            .setIdempotent(true));
                    assertThat(started)
                            .filteredOn(c -> c.getName().equals("hedge.call"))
                            .singleElement()
                            .satisfies(c -> assertThat(c.getLowCardinalityKeyValue("hedge.executor")
                                            .getValue())
                                    .isEqualTo("cassandra"));
                    assertThat(started)
                            .filteredOn(c -> c.getName().equals("hedge.attempt"))
                            .singleElement()
                            .satisfies(c -> assertThat(c.getLowCardinalityKeyValue("hedge.outcome")
                                            .getValue())
                                    .isEqualTo("won"));
                });
    }

    @Test
    @Timeout(120) // a hung call fails the test instead of the build
    void should_hedge_each_call_whose_primary_hits_the_slow_node_when_the_wrapped_session_is_new() {
        // no hedge.* property: the statements are marked idempotent, everything else is the default
        runner.run(ctx -> {
            HedgedCqlSession session = (HedgedCqlSession) ctx.getBean(CqlSession.class);
            HedgedExecutor executor = session.executor();
            assertThat(executor.config().delayPolicy())
                    .as("the starter's default delay is a percentile, which warms up")
                    .isInstanceOf(PercentileDelay.class);
            assertThat(executor.budget().initialTokens())
                    .isEqualTo(HedgeBudget.coldStartTokens(executor.config().budgetRatio()))
                    .isEqualTo(20);

            // fast answers first, until one is a sample: before any sample nothing is hedged, and
            // a node's first answer measured its connection (LatencyTracker.recordAnswer)
            for (int i = 0; i < 30 && executor.latencyTracker().sampleCount() == 0; i++) {
                session.execute(
                        SimpleStatement.newInstance(SimulatedCassandra.SELECT).setIdempotent(true));
            }
            assertThat(executor.latencyTracker().sampleCount()).isPositive();
            // then node 0 answers the statement under test after 1 s
            cassandra.slow(0, SimulatedCassandra.INSERT, 1_000);
            String slowNode = cassandra.address(0);
            List<CallCompleted> calls = new CopyOnWriteArrayList<>();
            executor.events().subscribe(CallCompleted.class, calls::add);
            // fewer calls than the budget's 20 starting tokens: no hedge can be denied
            List<String> coordinators = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                ResultSet rs = session.execute(
                        SimpleStatement.newInstance(SimulatedCassandra.INSERT).setIdempotent(true));
                InetSocketAddress c = (InetSocketAddress)
                        rs.getExecutionInfo().getCoordinator().getEndPoint().resolve();
                coordinators.add(c.getHostString() + ":" + c.getPort());
            }

            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> calls.size() == 20);
            List<CallCompleted> slowPrimaries = calls.stream()
                    .filter(call -> call.attempts().get(0).target().equals(slowNode))
                    .toList();
            assertThat(slowPrimaries)
                    .as("the slow node gets some primaries before latency-aware ordering puts it last")
                    .isNotEmpty()
                    .allSatisfy(call -> {
                        assertThat(call.winningAttempt()).isEqualTo(2);
                        assertThat(call.attempts().get(1).target()).isNotEqualTo(slowNode);
                    });
            assertThat(coordinators).as("no call was answered by the slow node").doesNotContain(slowNode);
            // counted at the nodes: node 0 ran exactly the attempts the calls sent it, and every
            // insert was run once per attempt
            long attemptsOnSlowNode = calls.stream()
                    .flatMap(call -> call.attempts().stream())
                    .filter(a -> slowNode.equals(a.target()))
                    .count();
            long attempts =
                    calls.stream().mapToLong(call -> call.attempts().size()).sum();
            // every attempt not cancelled reached a node (the session leaves beaten primaries
            // running); a loser cancelled at once (its call answered as it started) may not have
            long notCancelled = calls.stream()
                    .flatMap(call -> call.attempts().stream())
                    .filter(a -> a.outcome() != AttemptRecord.AttemptOutcome.CANCELLED)
                    .count();
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(cassandra.received(0, SimulatedCassandra.INSERT))
                        .isLessThanOrEqualTo(attemptsOnSlowNode)
                        .isGreaterThanOrEqualTo(slowPrimaries.size());
                assertThat(cassandra.received(SimulatedCassandra.INSERT)).isBetween(notCancelled, attempts);
            });

            HedgeStats stats = executor.stats();
            assertThat(stats.hedgesWon()).isGreaterThanOrEqualTo(slowPrimaries.size());
            assertThat(stats.budgetDenied()).isZero();
            // long before the p95 could be trusted: that needs 100 samples of one node
            assertThat(executor.latencyTracker().sampleCount()).isLessThan(100);
        });
    }

    @Test
    void should_list_the_session_executor_in_the_registry_the_endpoint_and_the_metrics_and_follow_runtime_changes() {
        runner.withConfiguration(AutoConfigurations.of(
                        HedgeMetricsAutoConfiguration.class, HedgeEndpointAutoConfiguration.class))
                .withBean(SimpleMeterRegistry.class)
                .withPropertyValues(
                        "management.endpoints.web.exposure.include=hedges",
                        "hedge.instances.cassandra.delay.fixed=20ms")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    HedgedCqlSession session = (HedgedCqlSession) ctx.getBean(CqlSession.class);
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    // one executor named after the instance: the session's is the registry's
                    HedgedExecutor executor =
                            instances.registry().find("cassandra").orElseThrow();
                    assertThat(session.executor()).isSameAs(executor);
                    // what HedgedCqlSession.defaultConfig() adds for the default Losers.LET_FINISH
                    assertThat(executor.config().loserSampling()).isEqualTo(1.0);
                    session.execute(SimpleStatement.newInstance(SimulatedCassandra.SELECT)
                            .setIdempotent(true));
                    assertThat(ctx.getBean(MeterRegistry.class)
                                    .get("hedge.calls")
                                    .tag("name", "cassandra")
                                    .tag("outcome", "success")
                                    .counter()
                                    .count())
                            .isEqualTo(1.0);
                    HedgesEndpoint endpoint = ctx.getBean(HedgesEndpoint.class);
                    assertThat(endpoint.hedges().instances()).containsOnlyKeys("cassandra");
                    assertThat(endpoint.instance("cassandra").counters().calls())
                            .isEqualTo(1);
                    assertThat(endpoint.instance("cassandra").config().delay()).isEqualTo("fixed 20ms");

                    // a runtime change through the endpoint reaches the session at its next statement
                    endpoint.update("cassandra", null, Duration.ofMillis(5), null, 3);
                    assertThat(session.executor()).isNotSameAs(executor);
                    assertThat(session.executor().config().maxAttempts()).isEqualTo(3);
                    session.execute(SimpleStatement.newInstance(SimulatedCassandra.SELECT)
                            .setIdempotent(true));
                    assertThat(endpoint.instance("cassandra").counters().calls())
                            .isEqualTo(1);
                    assertThat(endpoint.instance("cassandra").config().delay()).isEqualTo("fixed 5ms");
                });
    }

    @Test
    void should_run_a_non_idempotent_statement_exactly_once_when_its_replica_is_slow() {
        runner.withPropertyValues("hedge.instances.cassandra.delay.fixed=1ms").run(ctx -> {
            HedgedCqlSession session = (HedgedCqlSession) ctx.getBean(CqlSession.class);
            for (int i = 0; i < 3; i++) {
                cassandra.slow(i, 150);
            }
            session.execute(SimpleStatement.newInstance(SimulatedCassandra.INSERT));
            assertThat(cassandra.received(SimulatedCassandra.INSERT)).isEqualTo(1);
            assertThat(session.executor().stats().hedgesSent()).isZero();
        });
    }

    @Test
    void should_install_the_driver_policies_with_the_instance_settings_when_the_mode_is_policy() {
        runner.withPropertyValues(
                        "hedge.cassandra.mode=policy",
                        "hedge.instances.cassandra.max-attempts=3",
                        "hedge.instances.cassandra.max-extra-load=0.1",
                        "hedge.instances.cassandra.delay.percentile=0.9",
                        "hedge.cassandra.timer-tick=1ms")
                .run(ctx -> {
                    assertThat(ctx)
                            .hasNotFailed()
                            .doesNotHaveBean(HedgeCassandraAutoConfiguration.HedgedCqlSessionPostProcessor.class);
                    CqlSession session = ctx.getBean(CqlSession.class);
                    assertThat(session).isNotInstanceOf(HedgedCqlSession.class);
                    SpeculativeExecutionPolicy policy =
                            session.getContext().getSpeculativeExecutionPolicy(DriverExecutionProfile.DEFAULT_NAME);
                    assertThat(policy).isInstanceOf(HedgeSpeculativeExecutionPolicy.class);
                    assertThat(((HedgeSpeculativeExecutionPolicy) policy).maxExecutions())
                            .isEqualTo(3);
                    assertThat(((HedgeSpeculativeExecutionPolicy) policy)
                                    .budget()
                                    .ratio())
                            .isEqualTo(0.1);
                    assertThat(session.getContext().getLoadBalancingPolicy(DriverExecutionProfile.DEFAULT_NAME))
                            .isInstanceOf(HedgeLoadBalancingPolicy.class);
                    session.execute(SimpleStatement.newInstance(SimulatedCassandra.SELECT)
                            .setIdempotent(true));
                    // the instance was copied into the driver's options: no executor of its own
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    assertThat(instances.registry().find("cassandra")).isEmpty();
                    assertThat(instances.names()).doesNotContain("cassandra");
                });
    }

    @Test
    void should_leave_the_session_alone_when_the_mode_is_off() {
        runner.withPropertyValues("hedge.cassandra.mode=off").run(ctx -> {
            assertThat(ctx)
                    .doesNotHaveBean(HedgeCassandraAutoConfiguration.HedgedCqlSessionPostProcessor.class)
                    .doesNotHaveBean(DriverConfigLoaderBuilderCustomizer.class);
            assertThat(ctx.getBean(CqlSession.class)).isNotInstanceOf(HedgedCqlSession.class);
        });
    }

    @Test
    void should_back_off_when_hedge_cassandra_is_not_on_the_class_path() {
        runner.withClassLoader(new FilteredClassLoader(HedgedCqlSession.class)).run(ctx -> assertThat(ctx)
                .hasNotFailed()
                .doesNotHaveBean(HedgeCassandraAutoConfiguration.class)
                .doesNotHaveBean(HedgeCassandraAutoConfiguration.HedgedCqlSessionPostProcessor.class));
    }

    @Test
    void should_back_off_when_the_driver_is_not_on_the_class_path() {
        runner.withClassLoader(new FilteredClassLoader(CqlSession.class)).run(ctx -> assertThat(ctx)
                .hasNotFailed()
                .hasSingleBean(HedgeInstances.class)
                .doesNotHaveBean(HedgeCassandraAutoConfiguration.class));
    }

    @Test
    void should_leave_a_session_the_application_defines_alone() {
        runner.withUserConfiguration(UserSession.class).run(ctx -> {
            assertThat(ctx).hasSingleBean(CqlSession.class);
            assertThat(ctx.getBean(CqlSession.class)).isNotInstanceOf(HedgedCqlSession.class);
        });
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "wrapped|hedge.instances.cassandra.max-extra-load=1.5"
                        + "|hedge.instances.cassandra.max-extra-load must be in (0, 1), was 1.5",
                "policy|hedge.instances.cassandra.max-extra-load=1.5"
                        + "|hedge.instances.cassandra.max-extra-load must be in (0, 1), was 1.5",
                "policy|hedge.instances.cassandra.delay.increasing.initial=10ms"
                        + " hedge.instances.cassandra.delay.increasing.step=1ms"
                        + "|hedge.instances.cassandra.delay.increasing must be percentile or fixed when"
                        + " hedge.cassandra.mode=policy, was set",
                "policy|hedge.cassandra.timer-tick=0ms|hedge.cassandra.timer-tick must be in [1ms, 1s], was 0ms",
            })
    void should_fail_the_start_naming_property_range_and_value_when_a_setting_is_invalid(
            String mode, String properties, String expected) {
        runner.withPropertyValues("hedge.cassandra.mode=" + mode)
                .withPropertyValues(properties.split(" "))
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    FailureAnalysis analysis = new HedgePropertiesFailureAnalyzer().analyze(ctx.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).isEqualTo("Invalid hedge configuration: " + expected + ".");
                });
    }

    @Test
    void should_fail_the_start_naming_the_property_when_the_mode_is_unknown() {
        runner.withPropertyValues("hedge.cassandra.mode=sometimes").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure())
                    .hasStackTraceContaining("hedge.cassandra.mode")
                    .hasStackTraceContaining("sometimes");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserSession {
        @Bean(destroyMethod = "close")
        CqlSession mySession() {
            String[] hp = cassandra.contactPoint().split(":");
            return CqlSession.builder()
                    .addContactPoint(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])))
                    .withLocalDatacenter("dc1")
                    .build();
        }
    }
}

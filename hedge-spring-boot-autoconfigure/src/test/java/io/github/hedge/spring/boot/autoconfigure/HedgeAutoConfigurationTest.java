package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.DelayContext;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.aop.HedgedAdvisor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.io.support.SpringFactoriesLoader;

class HedgeAutoConfigurationTest {
    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HedgeAutoConfiguration.class));

    @Test
    void should_create_registry_instances_and_advisor_when_hedge_core_is_on_the_class_path() {
        runner.withPropertyValues("hedge.instances.user-reads.idempotent=true").run(ctx -> {
            assertThat(ctx).hasSingleBean(HedgedExecutorRegistry.class);
            assertThat(ctx).hasSingleBean(HedgeInstances.class);
            assertThat(ctx).hasSingleBean(HedgedAdvisor.class);
            assertThat(ctx.getBean(HedgedExecutorRegistry.class).find("user-reads"))
                    .as("listed instances are built at start")
                    .isPresent();
        });
    }

    @Test
    void should_create_the_advisor_when_aspectj_is_absent() {
        runner.withClassLoader(new FilteredClassLoader("org.aspectj")).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).hasSingleBean(HedgeInstances.class);
            assertThat(ctx).hasSingleBean(HedgedAdvisor.class);
        });
    }

    @Test
    void should_create_nothing_when_hedge_core_is_absent() {
        runner.withClassLoader(new FilteredClassLoader(HedgedExecutor.class)).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean(HedgedExecutorRegistry.class);
            assertThat(ctx).doesNotHaveBean(HedgeInstances.class);
            assertThat(ctx).doesNotHaveBean(HedgedAdvisor.class);
        });
    }

    @Test
    void should_use_the_user_beans_when_the_application_defines_them() {
        runner.withUserConfiguration(UserBeans.class)
                .withPropertyValues("hedge.instances.user-reads.max-attempts=3")
                .run(ctx -> {
                    assertThat(ctx.getBean(HedgedExecutorRegistry.class)).isSameAs(UserBeans.REGISTRY);
                    assertThat(ctx.getBean(HedgedAdvisor.class).getOrder()).isEqualTo(7);
                    assertThat(UserBeans.REGISTRY.find("user-reads"))
                            .as("the properties still configure instances in the user's registry")
                            .hasValueSatisfying(
                                    e -> assertThat(e.config().maxAttempts()).isEqualTo(3));
                });
    }

    @Test
    void should_order_the_advisor_as_the_property_says_when_hedge_aspect_order_is_set() {
        runner.run(ctx -> assertThat(ctx.getBean(HedgedAdvisor.class).getOrder())
                .as("the metadata's default (HedgeProperties) and the advisor's agree")
                .isEqualTo(HedgedAdvisor.DEFAULT_ORDER)
                .isEqualTo(new HedgeProperties().getAspect().getOrder()));
        runner.withPropertyValues("hedge.aspect.order=5")
                .run(ctx ->
                        assertThat(ctx.getBean(HedgedAdvisor.class).getOrder()).isEqualTo(5));
    }

    @Test
    void should_keep_every_other_setting_when_one_setting_of_an_instance_is_changed_at_runtime() {
        runner.withPropertyValues(
                        "hedge.defaults.savings-window=7m",
                        "hedge.defaults.loser-sampling=0.25",
                        "hedge.defaults.slow-call-threshold=3s",
                        "hedge.defaults.timeout=9s",
                        "hedge.instances.a.idempotent=true",
                        "hedge.instances.a.max-extra-load=0.2",
                        "hedge.instances.a.min-delay=1ms",
                        "hedge.instances.a.max-delay=2s",
                        "hedge.instances.b.savings-window=11m",
                        "hedge.instances.b.loser-sampling=0.5")
                .run(ctx -> {
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    for (String name : List.of("a", "b")) {
                        HedgeInstanceSettings before = instances.settings(name).orElseThrow();
                        HedgeInstanceSettings after = instances.update(name, i -> i.setMaxAttempts(3));
                        assertThat(after)
                                .as("instance %s: only max-attempts changed", name)
                                .isEqualTo(new HedgeInstanceSettings(
                                        3,
                                        before.delay(),
                                        before.maxExtraLoad(),
                                        before.minDelay(),
                                        before.maxDelay(),
                                        before.timeout(),
                                        before.idempotent(),
                                        before.slowCallThreshold(),
                                        before.savingsWindow(),
                                        before.loserSampling()));
                    }
                    assertThat(instances.settings("b").orElseThrow().loserSampling())
                            .isEqualTo(0.5);
                    assertThat(instances.settings("a").orElseThrow().savingsWindow())
                            .isEqualTo(Duration.ofMinutes(7));
                });
    }

    @Test
    void should_use_the_built_in_defaults_when_nothing_is_set() {
        runner.run(ctx -> {
            HedgeInstances instances = ctx.getBean(HedgeInstances.class);
            HedgeConfig config = instances.executor("anything").config();
            assertThat(config.maxAttempts()).isEqualTo(2);
            assertThat(config.budgetRatio()).isEqualTo(0.05);
            assertThat(config.idempotentByDefault())
                    .as("never hedge what is not marked")
                    .isFalse();
            assertThat(config.deadline()).isEmpty();
            assertThat(config.delayPolicy()).isInstanceOfSatisfying(PercentileDelay.class, p -> {
                assertThat(p.percentile()).isEqualTo(0.95);
                assertThat(p.min()).isEqualTo(Duration.ZERO);
                assertThat(p.max()).isEqualTo(Duration.ofSeconds(10));
                assertThat(p.minSamples()).isEqualTo(100);
            });
            // max-extra-load's bucket saves a quarter of the last 30 s of deposits, or 75 tokens
            HedgeBudget budget = instances.executor("anything").budget();
            assertThat(budget.ratio()).isEqualTo(0.05);
            assertThat(budget.window()).isEqualTo(Duration.ofSeconds(30));
            assertThat(budget.burst()).isEqualTo(0.25);
            assertThat(budget.minBurst()).isEqualTo(75);
        });
    }

    @Test
    void should_save_at_most_75_tokens_when_a_quarter_of_the_window_deposits_is_fewer() {
        runner.withPropertyValues("hedge.instances.a.max-extra-load=0.05").run(ctx -> {
            HedgeBudget budget = ctx.getBean(HedgeInstances.class).executor("a").budget();
            // 2,000 primaries deposit 100 tokens; a quarter of them is 25, so 75 is the cap
            for (int i = 0; i < 2_000; i++) {
                budget.recordPrimary();
            }
            assertThat(budget.snapshot().remaining()).isEqualTo(75.0);
        });
    }

    @Test
    @Timeout(120) // a hung call fails the test instead of the build
    void should_hedge_each_call_whose_primary_hits_the_slow_replica_when_a_hedged_method_is_new() {
        // no hedge.* property: the instance is unlisted, so hedge.defaults builds it, and only the
        // annotation marks the method idempotent
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, HedgeAutoConfiguration.class))
                .withUserConfiguration(ReplicaBeans.class)
                .run(ctx -> {
                    ReplicaClient client = ctx.getBean(ReplicaClient.class);
                    Replicas replicas = ctx.getBean(Replicas.class);
                    HedgedExecutor executor = ctx.getBean(HedgeInstances.class).executor(ReplicaClient.INSTANCE);
                    assertThat(executor.config().delayPolicy())
                            .as("the starter's default delay is a percentile, which warms up")
                            .isInstanceOf(PercentileDelay.class);
                    double tokens =
                            HedgeBudget.coldStartTokens(executor.config().budgetRatio());
                    assertThat(executor.budget().initialTokens())
                            .isEqualTo(tokens)
                            .isEqualTo(20);

                    // fast answers first, until one is a sample: before any sample nothing is hedged,
                    // and the first answer measured the connection (LatencyTracker.recordAnswer)
                    for (int i = 0; i < 20 && executor.latencyTracker().sampleCount() == 0; i++) {
                        client.read("first");
                    }
                    assertThat(executor.latencyTracker().sampleCount()).isPositive();

                    // then as many calls with a primary on the slow replica as the budget has starting
                    // tokens: each must be answered by its hedge, from another replica
                    List<String> slowPrimaries = new ArrayList<>();
                    for (int i = 0; slowPrimaries.size() < tokens; i++) {
                        assertThat(i).as("calls so far").isLessThan(200);
                        String key = "call-" + i;
                        String reply = client.read(key);
                        if (replicas.primaryOf(key) == Replicas.SLOW) {
                            slowPrimaries.add(key);
                            assertThat(reply)
                                    .as("%s, whose primary went to the slow replica", key)
                                    .isNotEqualTo(Replicas.name(Replicas.SLOW));
                            assertThat(replicas.replicasOf(key))
                                    .as("%s: a hedge on another replica", key)
                                    .hasSize(2)
                                    .doesNotHaveDuplicates();
                        }
                    }

                    // counted where it happened: the slow replica answered nothing, each of its
                    // attempts was interrupted when the hedge won
                    Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                                    replicas.invocations)
                            .filteredOn(r -> r.replica == Replicas.SLOW && !r.key.equals("first"))
                            .hasSizeGreaterThanOrEqualTo(slowPrimaries.size())
                            .allMatch(r -> r.interrupted && !r.answered));
                    HedgeStats stats = executor.stats();
                    assertThat(stats.hedgesWon()).isGreaterThanOrEqualTo(slowPrimaries.size());
                    assertThat(stats.budgetDenied()).isZero();
                    // long before the p95 could be trusted: that needs 100 samples of one target
                    assertThat(executor.latencyTracker().sampleCount()).isLessThan(100);
                });
    }

    @Test
    void should_warm_up_until_five_hundred_samples_when_the_percentile_is_p99() throws InterruptedException {
        runner.withPropertyValues(
                        "hedge.instances.p99.delay.percentile=0.99", "hedge.instances.p95.delay.percentile=0.95")
                .run(ctx -> {
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    // p99 needs 5 / (1 - 0.99) = 500 samples, more than the 100 of minSamples
                    assertWarmsUpUntil(instances.executor("p99"), 500);
                    // p95 needs 5 / (1 - 0.95) = 100: minSamples and the percentile agree
                    assertWarmsUpUntil(instances.executor("p95"), 100);
                });
    }

    /**
     * One sample short of {@code samples} the percentile is not trusted and the warm-up bound decides:
     * 4 times the median of 1..n ms, above every sample; from {@code samples} on, the percentile,
     * which lies within them.
     */
    private static void assertWarmsUpUntil(HedgedExecutor executor, long samples) throws InterruptedException {
        PercentileDelay policy = (PercentileDelay) executor.config().delayPolicy();
        DelayContext context = DelayContext.of(2, List.of(), executor.latencyTracker());
        long warming = delayAfterSamples(executor, samples - 1);
        assertThat(warming)
                .as("the delay with %d samples", samples - 1)
                .isEqualTo(policy.fallback().delayNanos(context))
                .isGreaterThan(Duration.ofMillis(samples - 1).toNanos());
        assertThat(delayAfterSamples(executor, samples))
                .as("the delay with %d samples", samples)
                .isPositive()
                .isLessThan(Duration.ofMillis(samples).toNanos());
    }

    /**
     * Records latencies of 1 ms, 2 ms, ... until the executor's tracker holds {@code samples}, waits
     * until they are visible and returns the delay a call starting now would get.
     */
    private static long delayAfterSamples(HedgedExecutor executor, long samples) throws InterruptedException {
        LatencyTracker tracker = executor.latencyTracker();
        for (long n = tracker.sampleCount() + 1; n <= samples; n++) {
            tracker.record(Duration.ofMillis(n).toNanos());
        }
        awaitTrue(() -> tracker.sampleCount() == samples);
        return executor.currentDelayNanos();
    }

    private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("condition not met within 10 s");
            }
            Thread.sleep(1);
        }
    }

    @Test
    void should_inherit_every_unset_value_from_defaults_when_an_instance_sets_some() {
        runner.withPropertyValues(
                        "hedge.defaults.max-attempts=3",
                        "hedge.defaults.max-extra-load=0.02",
                        "hedge.defaults.delay.fixed=40ms",
                        "hedge.defaults.timeout=2s",
                        "hedge.defaults.idempotent=true",
                        "hedge.defaults.slow-call-threshold=300ms",
                        "hedge.instances.user-reads.max-attempts=4",
                        "hedge.instances.user-writes.idempotent=false",
                        "hedge.instances.user-writes.delay.percentile=0.99",
                        "hedge.instances.user-writes.max-delay=50ms")
                .run(ctx -> {
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    HedgeInstanceSettings reads =
                            instances.settings("user-reads").orElseThrow();
                    assertThat(reads)
                            .isEqualTo(new HedgeInstanceSettings(
                                    4,
                                    "fixed 40ms",
                                    0.02,
                                    Duration.ZERO,
                                    Duration.ofSeconds(10),
                                    Duration.ofSeconds(2),
                                    true,
                                    Duration.ofMillis(300),
                                    Duration.ofMinutes(5),
                                    0.0));
                    HedgeInstanceSettings writes =
                            instances.settings("user-writes").orElseThrow();
                    assertThat(writes)
                            .isEqualTo(new HedgeInstanceSettings(
                                    3,
                                    "percentile 0.99 in [0ms, 50ms]",
                                    0.02,
                                    Duration.ZERO,
                                    Duration.ofMillis(50),
                                    Duration.ofSeconds(2),
                                    false,
                                    Duration.ofMillis(300),
                                    Duration.ofMinutes(5),
                                    0.0));
                    HedgeConfig readsConfig = instances.executor("user-reads").config();
                    assertThat(readsConfig.deadline()).contains(Duration.ofSeconds(2));
                    assertThat(readsConfig.delayPolicy()).isInstanceOf(DelayPolicy.FixedDelay.class);
                });
    }

    @Test
    void should_inherit_increasing_sub_values_from_defaults_when_the_instance_sets_only_some() {
        runner.withPropertyValues(
                        "hedge.defaults.delay.increasing.initial=10ms",
                        "hedge.defaults.delay.increasing.step=5ms",
                        "hedge.instances.a.delay.increasing.step=20ms",
                        "hedge.instances.a.min-delay=15ms")
                .run(ctx -> assertThat(ctx.getBean(HedgeInstances.class)
                                .settings("a")
                                .orElseThrow()
                                .delay())
                        .isEqualTo("increasing 10ms +20ms max 10s min 15ms"));
    }

    @Test
    void should_derive_the_percentile_from_max_extra_load_when_no_delay_is_set() {
        runner.withPropertyValues("hedge.instances.a.max-extra-load=0.01").run(ctx -> {
            HedgeConfig config = ctx.getBean(HedgeInstances.class).executor("a").config();
            assertThat(config.budgetRatio()).isEqualTo(0.01);
            assertThat(((PercentileDelay) config.delayPolicy()).percentile()).isEqualTo(0.99);
        });
    }

    @Test
    void should_aim_at_less_demand_while_the_budget_runs_low_when_the_percentile_comes_from_max_extra_load() {
        runner.withPropertyValues(
                        "hedge.instances.derived.max-extra-load=0.02", "hedge.instances.explicit.delay.percentile=0.98")
                .run(ctx -> {
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    // the same delay policy as the core's HedgeConfig.Builder#maxExtraLoad, the one knob
                    assertThat(instances.executor("derived").config().delayPolicy())
                            .isInstanceOfSatisfying(PercentileDelay.class, p -> {
                                assertThat(p.percentile()).isEqualTo(0.98);
                                assertThat(p.budgetFeedback()).isTrue();
                            });
                    assertThat(instances.settings("derived").orElseThrow().delay())
                            .isEqualTo("percentile 0.98 in [0ms, 10s] with budget feedback");
                    // a percentile the user wrote is taken as written
                    assertThat(instances.executor("explicit").config().delayPolicy())
                            .isInstanceOfSatisfying(PercentileDelay.class, p -> assertThat(p.budgetFeedback())
                                    .isFalse());
                    assertThat(instances.settings("explicit").orElseThrow().delay())
                            .isEqualTo("percentile 0.98 in [0ms, 10s]");
                });
    }

    @Test
    void should_pass_savings_window_and_loser_sampling_to_the_executor_when_set() {
        runner.withPropertyValues(
                        "hedge.defaults.savings-window=10m",
                        "hedge.defaults.loser-sampling=0.25",
                        "hedge.instances.sampled.loser-sampling=0.5",
                        "hedge.instances.inherits.idempotent=true")
                .run(ctx -> {
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    HedgeConfig sampled = instances.executor("sampled").config();
                    assertThat(sampled.loserSampling()).isEqualTo(0.5);
                    assertThat(sampled.savingsWindow()).isEqualTo(Duration.ofMinutes(10));
                    HedgeConfig inherits = instances.executor("inherits").config();
                    assertThat(inherits.loserSampling()).isEqualTo(0.25);
                    assertThat(instances.settings("inherits").orElseThrow().savingsWindow())
                            .isEqualTo(Duration.ofMinutes(10));
                });
        runner.withPropertyValues("hedge.instances.plain.idempotent=true").run(ctx -> {
            HedgeConfig plain =
                    ctx.getBean(HedgeInstances.class).executor("plain").config();
            assertThat(plain.loserSampling())
                    .as("every loser cancelled by default")
                    .isZero();
            assertThat(plain.savingsWindow())
                    .isEqualTo(HedgeConfig.builder().build().savingsWindow());
        });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "hedge.instances.a.max-attempts|0|hedge.instances.a.max-attempts must be in [1, 16], was 0",
                "hedge.instances.a.max-attempts|17|hedge.instances.a.max-attempts must be in [1, 16], was 17",
                "hedge.instances.a.max-extra-load|1.5|hedge.instances.a.max-extra-load must be in (0, 1), was 1.5",
                "hedge.instances.a.max-extra-load|0|hedge.instances.a.max-extra-load must be in (0, 1), was 0.0",
                "hedge.instances.a.delay.percentile|1.5|hedge.instances.a.delay.percentile must be in (0, 1), was 1.5",
                "hedge.instances.a.delay.fixed|-5ms|hedge.instances.a.delay.fixed must be in [0, 365d], was PT-0.005S",
                "hedge.instances.a.min-delay|-1ms|hedge.instances.a.min-delay must be in [0, 365d], was PT-0.001S",
                "hedge.instances.a.max-delay|0s|hedge.instances.a.max-delay must be in (0, 365d], was 0ms",
                "hedge.instances.a.max-delay|400d|hedge.instances.a.max-delay must be in (0, 365d], was PT9600H",
                "hedge.instances.a.min-delay|20s|hedge.instances.a.min-delay must be <= hedge.defaults.max-delay (10s), was 20s",
                "hedge.instances.a.timeout|0ms|hedge.instances.a.timeout must be in (0, 365d], was 0ms",
                "hedge.instances.a.slow-call-threshold|-1s|hedge.instances.a.slow-call-threshold must be in (0, 365d], was PT-1S",
                "hedge.defaults.max-extra-load|1|hedge.defaults.max-extra-load must be in (0, 1), was 1.0",
                "hedge.defaults.max-attempts|99|hedge.defaults.max-attempts must be in [1, 16], was 99",
                "hedge.instances.a.loser-sampling|1.5|hedge.instances.a.loser-sampling must be in [0, 1], was 1.5",
                "hedge.instances.a.loser-sampling|-0.1|hedge.instances.a.loser-sampling must be in [0, 1], was -0.1",
                "hedge.defaults.savings-window|0s|hedge.defaults.savings-window must be in (0, 365d], was 0ms",
            })
    void should_fail_the_start_naming_property_range_and_value_when_a_property_is_invalid(
            String property, String value, String expected) {
        runner.withPropertyValues(property + "=" + value, "hedge.instances.a.idempotent=true")
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    FailureAnalysis analysis = new HedgePropertiesFailureAnalyzer().analyze(ctx.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).isEqualTo("Invalid hedge configuration: " + expected + ".");
                    assertThat(analysis.getAction()).contains("'" + expected.substring(0, expected.indexOf(' ')) + "'");
                });
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "initial=-1ms,step=5ms|initial must be in [0, 365d], was PT-0.001S",
                "step=5ms|initial must be set (a duration >= 0), was null",
                "initial=10ms,step=-5ms|step must be in [0, 365d], was PT-0.005S",
                "initial=10ms|step must be set (a duration >= 0), was null",
                "initial=10ms,step=5ms,max=-1ms|max must be in [0, 365d], was PT-0.001S",
                "initial=10ms,step=5ms,max=400d|max must be in [0, 365d], was PT9600H",
                "initial=20ms,step=5ms,max=10ms|initial must be <= increasing.max and max-delay (10ms), was 20ms",
                "initial=20s,step=5ms|initial must be <= increasing.max and max-delay (10s), was 20s",
            })
    void should_fail_the_start_naming_property_range_and_value_when_an_increasing_delay_is_invalid(
            String settings, String expected) {
        String prefix = "hedge.instances.a.delay.increasing.";
        String[] properties = Arrays.stream(settings.split(","))
                .map(setting -> prefix + setting)
                .toArray(String[]::new);
        runner.withPropertyValues(properties).run(ctx -> {
            assertThat(ctx).hasFailed();
            FailureAnalysis analysis = new HedgePropertiesFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(analysis).isNotNull();
            assertThat(analysis.getDescription()).isEqualTo("Invalid hedge configuration: " + prefix + expected + ".");
            assertThat(analysis.getAction())
                    .contains("'" + prefix + expected.substring(0, expected.indexOf(' ')) + "'");
        });
    }

    @Test
    void should_fail_the_start_when_one_block_sets_two_delay_kinds() {
        runner.withPropertyValues("hedge.instances.a.delay.fixed=10ms", "hedge.instances.a.delay.percentile=0.9")
                .run(ctx -> assertThat(new HedgePropertiesFailureAnalyzer()
                                .analyze(ctx.getStartupFailure())
                                .getDescription())
                        .isEqualTo("Invalid hedge configuration: hedge.instances.a.delay.* must be one of percentile,"
                                + " fixed or increasing, was percentile and fixed."));
    }

    @Test
    void should_leave_a_value_of_the_wrong_type_to_spring_boot_binding_failure_report() {
        runner.withPropertyValues("hedge.instances.a.max-attempts=two").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("two");
            assertThat(ctx.getStartupFailure()).hasStackTraceContaining("hedge.instances.a.max-attempts");
        });
    }

    @Test
    void should_attach_a_slow_call_log_only_when_slow_call_threshold_is_set() {
        runner.withPropertyValues(
                        "hedge.instances.logged.slow-call-threshold=300ms", "hedge.instances.quiet.max-attempts=2")
                .run(ctx -> {
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    assertThat(instances.executor("logged").events().hasListeners())
                            .isTrue();
                    assertThat(instances.executor("quiet").events().hasListeners())
                            .isFalse();
                    instances.update("logged", i -> i.setMaxAttempts(3));
                    assertThat(instances.executor("logged").events().hasListeners())
                            .as("the new executor gets the log")
                            .isTrue();
                    ctx.close();
                    assertThat(instances.executor("logged").events().hasListeners())
                            .as("closed with the context")
                            .isFalse();
                });
    }

    @Test
    void should_register_the_failure_analyzer_with_spring_boot() {
        // Spring Boot's own analyzers need constructor arguments; only ours matters here
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation(
                        getClass().getClassLoader())
                .load(FailureAnalyzer.class, null, SpringFactoriesLoader.FailureHandler.handleMessage((m, e) -> {}));
        assertThat(analyzers).hasAtLeastOneElementOfType(HedgePropertiesFailureAnalyzer.class);
    }

    @Test
    void should_run_blocking_attempts_on_the_attempt_executor_bean_when_one_is_defined() {
        runner.withUserConfiguration(AttemptExecutorBean.class)
                .withPropertyValues("hedge.instances.a.idempotent=true")
                .run(ctx -> {
                    HedgedExecutor executor = ctx.getBean(HedgeInstances.class).executor("a");
                    assertThat(executor.config().attemptExecutor())
                            .isSameAs(ctx.getBean(HedgeAutoConfiguration.ATTEMPT_EXECUTOR_BEAN_NAME));
                    assertThat(executor.execute(() -> "ok")).isEqualTo("ok");
                    assertThat(AttemptExecutorBean.RUNS.get()).isEqualTo(1);
                });
    }

    @Test
    void should_apply_every_customizer_to_every_instance_when_customizers_are_defined() {
        runner.withUserConfiguration(Customizer.class)
                .withPropertyValues("hedge.instances.a.max-attempts=3")
                .run(ctx -> {
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    assertThat(instances.executor("a").budget()).isSameAs(Customizer.SHARED);
                    assertThat(instances.executor("unlisted").budget()).isSameAs(Customizer.SHARED);
                    assertThat(instances.executor("a").config().maxAttempts()).isEqualTo(3);
                });
    }

    @Test
    void should_replace_the_executor_and_keep_its_latency_tracker_when_an_instance_is_updated() {
        runner.withPropertyValues("hedge.instances.a.delay.fixed=20ms").run(ctx -> {
            HedgeInstances instances = ctx.getBean(HedgeInstances.class);
            HedgedExecutor before = instances.executor("a");
            HedgeInstanceSettings after = instances.update("a", i -> {
                i.getDelay().setFixed(Duration.ofMillis(5));
                i.setMaxExtraLoad(0.1);
            });
            assertThat(after.delay()).isEqualTo("fixed 5ms");
            HedgedExecutor now = instances.executor("a");
            assertThat(now).isNotSameAs(before);
            assertThat(now.currentDelayNanos()).isEqualTo(Duration.ofMillis(5).toNanos());
            assertThat(now.budget().ratio()).isEqualTo(0.1);
            assertThat(now.latencyTracker()).isSameAs(before.latencyTracker());
            assertThat(ctx.getBean(HedgedExecutorRegistry.class).find("a")).containsSame(now);
        });
    }

    @Test
    void should_change_nothing_when_an_update_is_invalid() {
        runner.withPropertyValues("hedge.instances.a.delay.fixed=20ms").run(ctx -> {
            HedgeInstances instances = ctx.getBean(HedgeInstances.class);
            HedgedExecutor before = instances.executor("a");
            assertThatThrownBy(() -> instances.update("a", i -> i.setMaxExtraLoad(2.0)))
                    .isInstanceOf(InvalidHedgePropertyException.class)
                    .hasMessage("hedge.instances.a.max-extra-load must be in (0, 1), was 2.0");
            assertThat(instances.executor("a")).isSameAs(before);
            assertThat(instances.settings("a").orElseThrow().maxExtraLoad()).isEqualTo(0.05);
        });
    }

    @Test
    void should_apply_changed_properties_without_restart_when_refreshed_from_the_environment() {
        runner.withPropertyValues("hedge.instances.a.delay.fixed=20ms", "hedge.instances.b.delay.fixed=30ms")
                .run(ctx -> {
                    HedgeInstances instances = ctx.getBean(HedgeInstances.class);
                    HedgedExecutor a = instances.executor("a");
                    HedgedExecutor b = instances.executor("b");
                    ctx.getEnvironment()
                            .getPropertySources()
                            .addFirst(new MapPropertySource("changed", Map.of("hedge.instances.a.delay.fixed", "7ms")));
                    instances.refresh();
                    assertThat(instances.executor("a").currentDelayNanos())
                            .isEqualTo(Duration.ofMillis(7).toNanos());
                    assertThat(instances.executor("a").budget())
                            .as("max-extra-load did not change: the budget is kept")
                            .isSameAs(a.budget());
                    assertThat(instances.executor("b")).as("unchanged instance").isSameAs(b);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserBeans {
        static final HedgedExecutorRegistry REGISTRY = HedgedExecutorRegistry.ofDefaults();

        @Bean
        HedgedExecutorRegistry myRegistry() {
            return REGISTRY;
        }

        @Bean
        static HedgedAdvisor myAdvisor() {
            return new HedgedAdvisor(() -> null, 7);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class AttemptExecutorBean {
        static final AtomicInteger RUNS = new AtomicInteger();

        @Bean(HedgeAutoConfiguration.ATTEMPT_EXECUTOR_BEAN_NAME)
        Executor hedgeAttemptExecutor() {
            return r -> {
                RUNS.incrementAndGet();
                new Thread(r, "test-attempt").start();
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Customizer {
        static final HedgeBudget SHARED = HedgeBudget.ofRatio(0.1);

        @Bean
        HedgeConfigCustomizer sharedBudget() {
            return (name, builder) -> builder.budget(SHARED);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ReplicaBeans {
        @Bean
        Replicas replicas() {
            return new Replicas();
        }

        @Bean
        ReplicaClient replicaClient(Replicas replicas) {
            return new ReplicaClient(replicas);
        }
    }

    /**
     * Three replicas behind a client: each attempt goes to the next replica in turn (a
     * {@code @Hedged} method does not see the call's attempts, so it cannot exclude the replica its
     * primary tried; with one call at a time, a hedge goes to the replica after its primary's).
     * Replica 2 answers after 2 s, except the request "first"; the others after 30 ms.
     */
    public static class Replicas {
        static final int SLOW = 2;
        final AtomicInteger next = new AtomicInteger();
        final List<Invocation> invocations = new CopyOnWriteArrayList<>();

        static String name(int replica) {
            return "replica " + replica;
        }

        String read(String key) throws InterruptedException {
            Invocation invocation = new Invocation(key, next.getAndIncrement() % 3);
            invocations.add(invocation);
            try {
                Thread.sleep(invocation.replica == SLOW && !key.equals("first") ? 2_000 : 30);
            } catch (InterruptedException e) {
                invocation.interrupted = true;
                throw e;
            }
            invocation.answered = true;
            return name(invocation.replica);
        }

        /** @return the replicas the call's attempts went to, in order */
        List<Integer> replicasOf(String key) {
            return invocations.stream()
                    .filter(i -> i.key.equals(key))
                    .map(i -> i.replica)
                    .toList();
        }

        int primaryOf(String key) {
            return replicasOf(key).get(0);
        }
    }

    /** One invocation on one replica. */
    static final class Invocation {
        final String key;
        final int replica;
        volatile boolean answered;
        volatile boolean interrupted;

        Invocation(String key, int replica) {
            this.key = key;
            this.replica = replica;
        }

        @Override
        public String toString() {
            return key + "@" + replica + (answered ? " answered" : "") + (interrupted ? " interrupted" : "");
        }
    }

    /** The application's client: one read, hedged through the instance {@value #INSTANCE}. */
    public static class ReplicaClient {
        static final String INSTANCE = "replicas";
        private final Replicas replicas;

        ReplicaClient(Replicas replicas) {
            this.replicas = replicas;
        }

        @Hedged(value = INSTANCE, idempotent = Hedged.Idempotence.IDEMPOTENT)
        public String read(String key) throws InterruptedException {
            return replicas.read(key);
        }
    }
}

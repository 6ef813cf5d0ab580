package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.micrometer.HedgeRegistryMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class HedgeMetricsAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HedgeAutoConfiguration.class, HedgeMetricsAutoConfiguration.class))
            .withPropertyValues(
                    "hedge.instances.user-reads.idempotent=true", "hedge.instances.user-reads.delay.fixed=20ms");

    private final ApplicationContextRunner withActuatorMetrics = runner.withConfiguration(AutoConfigurations.of(
            MetricsAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class,
            SimpleMetricsExportAutoConfiguration.class));

    @Test
    void should_bind_every_listed_instance_when_actuator_metrics_provide_the_registry() {
        withActuatorMetrics.run(ctx -> {
            MeterRegistry registry = ctx.getBean(MeterRegistry.class);
            assertThat(ctx).hasSingleBean(HedgeRegistryMetrics.class);
            assertThat(registry.find("hedge.calls").tag("name", "user-reads").counters())
                    .isNotEmpty();
            assertThat(registry.find("hedge.delay.current")
                            .tag("name", "user-reads")
                            .timeGauge()
                            .value())
                    .isEqualTo(20.0 * 1e-3, org.assertj.core.data.Offset.offset(1e-9));
        });
    }

    @Test
    void should_bind_instances_created_later_and_count_their_calls_when_a_registry_exists() {
        withActuatorMetrics.run(ctx -> {
            MeterRegistry registry = ctx.getBean(MeterRegistry.class);
            HedgeInstances instances = ctx.getBean(HedgeInstances.class);
            instances.executor("unlisted").execute(CallOptions.nonIdempotent(), () -> "ok");
            assertThat(registry.get("hedge.calls")
                            .tag("name", "unlisted")
                            .tag("outcome", "success")
                            .counter()
                            .count())
                    .isEqualTo(1.0);
        });
    }

    @Test
    void should_keep_an_instance_bound_when_it_is_reconfigured_at_runtime() {
        withActuatorMetrics.run(ctx -> {
            MeterRegistry registry = ctx.getBean(MeterRegistry.class);
            HedgeInstances instances = ctx.getBean(HedgeInstances.class);
            instances.update("user-reads", i -> i.getDelay().setFixed(java.time.Duration.ofMillis(5)));
            instances.executor("user-reads").execute(() -> "ok");
            assertThat(registry.get("hedge.calls")
                            .tag("name", "user-reads")
                            .tag("outcome", "success")
                            .counter()
                            .count())
                    .isEqualTo(1.0);
            assertThat(registry.get("hedge.delay.current")
                            .tag("name", "user-reads")
                            .timeGauge()
                            .value())
                    .isEqualTo(5.0 * 1e-3, org.assertj.core.data.Offset.offset(1e-9));
        });
    }

    @Test
    void should_bind_the_registry_bean_directly_when_actuator_metrics_are_not_configured() {
        runner.withUserConfiguration(PlainRegistry.class).run(ctx -> {
            assertThat(ctx.getBean(MeterRegistry.class)
                            .find("hedge.calls")
                            .tag("name", "user-reads")
                            .counters())
                    .isNotEmpty();
        });
    }

    @Test
    void should_not_bind_anything_when_there_is_no_meter_registry() {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean(HedgeRegistryMetrics.class);
        });
    }

    @Test
    void should_not_bind_anything_when_micrometer_is_absent() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer.core")).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).hasSingleBean(HedgeInstances.class);
            assertThat(ctx).doesNotHaveBean(HedgeRegistryMetrics.class);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class PlainRegistry {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }
}

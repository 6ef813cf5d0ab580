package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.core.micrometer.HedgeRegistryMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Binds every named executor to Micrometer when a {@link MeterRegistry} bean exists: a {@link
 * HedgeRegistryMetrics} that follows the registry, so executors created later (an unlisted
 * {@code @Hedged} name) or replaced at runtime are bound too. Meter names and tags are those of
 * hedge-core's {@code HedgeMetrics} ({@code hedge.calls}, {@code hedge.hedges.won}, ... tagged
 * {@code name=<instance>}).
 *
 * <p>With Spring Boot Actuator's metrics auto-configuration, its {@code MeterRegistryPostProcessor}
 * binds the binder to the application's registry; without it, the one {@code MeterRegistry} bean is
 * bound here.
 */
@AutoConfiguration(
        after = HedgeAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"
        })
@ConditionalOnClass({MeterRegistry.class, HedgeRegistryMetrics.class})
@ConditionalOnBean({MeterRegistry.class, HedgeInstances.class})
public class HedgeMetricsAutoConfiguration {
    /** Created by Spring. */
    public HedgeMetricsAutoConfiguration() {}

    /**
     * @param instances the named instances
     * @return a binder of every executor in their registry; closed with the context
     */
    @Bean
    @ConditionalOnMissingBean
    public HedgeRegistryMetrics hedgeRegistryMetrics(HedgeInstances instances) {
        return HedgeRegistryMetrics.of(instances.registry());
    }

    /** Without Actuator's metrics auto-configuration nobody binds {@code MeterBinder} beans. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(
            type = "org.springframework.boot.actuate.autoconfigure.metrics.MeterRegistryPostProcessor")
    static class DirectBinding {
        @Bean
        SmartInitializingSingleton hedgeMetricsBinder(
                HedgeRegistryMetrics metrics, ObjectProvider<MeterRegistry> registries) {
            return () -> registries.ifUnique(metrics::bindTo);
        }
    }
}

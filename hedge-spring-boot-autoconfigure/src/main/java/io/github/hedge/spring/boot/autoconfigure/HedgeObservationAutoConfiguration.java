package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.core.observation.HedgeObservations;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;

/**
 * Records a Micrometer observation per hedged call and per attempt when an {@link
 * ObservationRegistry} bean exists (Spring Boot Actuator creates one) and {@code
 * hedge.observations.enabled} is not {@code false}: a {@link HedgeObservations} bean, set as the
 * {@code callDecorator} of every instance (through a {@link HedgeConfigCustomizer}), of the gRPC
 * interceptor's executors and, through its instance, of the Cassandra session. Replace the bean to
 * change conventions.
 */
@AutoConfiguration(
        before = {HedgeAutoConfiguration.class, HedgeGrpcAutoConfiguration.class},
        afterName = "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration")
@ConditionalOnClass({ObservationRegistry.class, HedgeObservations.class})
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnProperty(prefix = "hedge.observations", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(HedgeProperties.class)
public class HedgeObservationAutoConfiguration {
    /** Created by Spring. */
    public HedgeObservationAutoConfiguration() {}

    /**
     * @param registry the application's observation registry
     * @param properties the {@code hedge.*} properties ({@code hedge.observations.include-targets})
     * @return the observations every hedged call reports to
     */
    @Bean
    @ConditionalOnMissingBean
    public HedgeObservations hedgeObservations(ObservationRegistry registry, HedgeProperties properties) {
        return HedgeObservations.builder(registry)
                .includeTargets(properties.getObservations().isIncludeTargets())
                .build();
    }

    /**
     * @param observations the observations
     * @return a customizer that sets them as every instance's call decorator, applied first so a
     *     customizer of the application can still replace them
     */
    @Bean
    public HedgeConfigCustomizer hedgeObservationsCustomizer(HedgeObservations observations) {
        return new ObservationsCustomizer(observations);
    }

    private record ObservationsCustomizer(HedgeObservations observations) implements HedgeConfigCustomizer, Ordered {
        @Override
        public void customize(String instanceName, io.github.hedge.core.HedgeConfig.Builder builder) {
            builder.callDecorator(observations);
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE;
        }
    }
}

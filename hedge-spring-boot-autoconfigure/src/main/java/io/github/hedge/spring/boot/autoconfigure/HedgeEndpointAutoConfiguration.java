package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.spring.boot.actuate.HedgesEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code hedges} actuator endpoint, when Spring Boot Actuator is on the class path and the
 * endpoint is enabled and exposed ({@code management.endpoints.web.exposure.include=hedges}).
 */
@AutoConfiguration(after = HedgeAutoConfiguration.class)
@ConditionalOnClass(
        name = {
            "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
        })
@ConditionalOnBean(HedgeInstances.class)
public class HedgeEndpointAutoConfiguration {
    /** Created by Spring. */
    public HedgeEndpointAutoConfiguration() {}

    /**
     * Nested, so that its actuator condition is only loaded once the class-path check above passed
     * (also where no auto-configuration metadata filters classes first, as in tests).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(HedgesEndpoint.class)
    static class EndpointConfiguration {
        @Bean
        @ConditionalOnMissingBean
        HedgesEndpoint hedgesEndpoint(HedgeInstances instances) {
            return new HedgesEndpoint(instances);
        }
    }
}

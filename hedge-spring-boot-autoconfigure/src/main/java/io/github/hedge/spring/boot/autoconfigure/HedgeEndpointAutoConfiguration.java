package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.spring.boot.actuate.HedgesEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

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
@ConditionalOnAvailableEndpoint(HedgesEndpoint.class)
public class HedgeEndpointAutoConfiguration {
    /** Created by Spring. */
    public HedgeEndpointAutoConfiguration() {}

    /**
     * @param instances the named instances
     * @return the endpoint
     */
    @Bean
    @ConditionalOnMissingBean
    public HedgesEndpoint hedgesEndpoint(HedgeInstances instances) {
        return new HedgesEndpoint(instances);
    }
}

package io.github.hedge.spring.boot.autoconfigure;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;

/**
 * With Spring Cloud Context on the class path, re-reads {@code hedge.*} when the environment
 * changes ({@code EnvironmentChangeEvent}: {@code POST /actuator/refresh}, a config-server push)
 * and reconfigures the instances whose settings changed, without a restart (see {@link
 * HedgeInstances#refresh()}). An invalid new value, a misspelt key or a value of the wrong type is
 * logged at WARN and changes nothing: a running
 * application keeps its last valid configuration. Off with {@code hedge.refresh.enabled=false}.
 */
@AutoConfiguration(after = HedgeAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
@ConditionalOnBean(HedgeInstances.class)
@ConditionalOnProperty(name = "hedge.refresh.enabled", havingValue = "true", matchIfMissing = true)
public class HedgeRefreshAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(HedgeRefreshAutoConfiguration.class);

    /** Created by Spring. */
    public HedgeRefreshAutoConfiguration() {}

    /**
     * @param instances the named instances
     * @return a listener that refreshes them when a {@code hedge.*} key changed
     */
    @Bean
    public ApplicationListener<EnvironmentChangeEvent> hedgeEnvironmentChangeListener(
            ObjectProvider<HedgeInstances> instances) {
        return event -> {
            if (event.getKeys().stream().noneMatch(k -> k.startsWith("hedge."))) {
                return;
            }
            try {
                instances.getObject().refresh();
            } catch (InvalidHedgePropertyException e) {
                log.warn("hedge.* changed to an invalid value; the previous configuration stays: {}", e.getMessage());
            } catch (BindException e) {
                // a misspelt key, or a value of the wrong type (max-attempts=two)
                String unknown = HedgePropertyNames.describeUnknown(e);
                log.warn(
                        "hedge.* changed to something that does not bind; the previous configuration stays: {}",
                        unknown != null
                                ? unknown
                                : e.getCause() != null
                                        ? e.getMessage() + ": " + e.getCause().getMessage()
                                        : e.getMessage());
            }
        };
    }
}

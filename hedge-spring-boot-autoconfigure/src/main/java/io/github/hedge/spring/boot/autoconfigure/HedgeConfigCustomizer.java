package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.core.HedgeConfig;

/**
 * Adjusts the {@link HedgeConfig} of each instance after the {@code hedge.*} properties were
 * applied: for what properties cannot say (an {@code ErrorClassifier}, context propagators, a
 * budget shared between instances, a ticker). Declare it as a bean; every customizer bean is
 * applied, in {@code @Order}, to every instance, listed or not, and again when an instance is
 * reconfigured at runtime. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface HedgeConfigCustomizer {
    /**
     * @param instanceName the instance being configured
     * @param builder holds the settings from the properties; change it in place
     */
    void customize(String instanceName, HedgeConfig.Builder builder);
}

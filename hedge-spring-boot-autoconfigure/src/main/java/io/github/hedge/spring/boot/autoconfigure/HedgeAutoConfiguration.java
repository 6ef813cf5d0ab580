package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.spring.aop.HedgedAdvisor;
import io.github.hedge.spring.aop.HedgedMethodsValidator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.UnboundElementsSourceFilter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/**
 * Auto-configures hedge from the {@code hedge.*} properties: a {@link HedgedExecutorRegistry}, the
 * {@link HedgeInstances} that build every named instance, and the {@link HedgedAdvisor} behind
 * {@code @Hedged}. Every bean backs off when the application
 * defines its own of the same type.
 *
 * <p>Plain (non-{@code CompletionStage}) {@code @Hedged} methods run their attempts on the {@link
 * Executor} bean named {@value #ATTEMPT_EXECUTOR_BEAN_NAME} if there is one, else on hedge-core's
 * default (a virtual thread per attempt on JDK 21+, else a shared cached pool of daemon threads).
 */
@AutoConfiguration
@ConditionalOnClass(HedgedExecutor.class)
@EnableConfigurationProperties(HedgeProperties.class)
public class HedgeAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(HedgeAutoConfiguration.class);

    /** The name of the optional {@link Executor} bean that runs the attempts of blocking calls. */
    public static final String ATTEMPT_EXECUTOR_BEAN_NAME = "hedgeAttemptExecutor";

    /** Created by Spring. */
    public HedgeAutoConfiguration() {}

    /**
     * @param properties the {@code hedge.*} properties
     * @return a registry whose default configuration is {@code hedge.defaults}
     */
    @Bean
    @ConditionalOnMissingBean
    public HedgedExecutorRegistry hedgedExecutorRegistry(HedgeProperties properties) {
        SettingsResolver.Resolved defaults = SettingsResolver.resolve("(defaults)", properties.getDefaults(), null);
        return HedgedExecutorRegistry.of(
                SettingsResolver.toBuilder("(defaults)", defaults).build());
    }

    /**
     * @param properties the {@code hedge.*} properties
     * @param registry the registry
     * @param customizers applied to every instance
     * @param attemptExecutor the executor of blocking attempts, if the application defines one
     * @param environment re-read by {@link HedgeInstances#refresh()}; its {@code HEDGE_*} variables and
     *     {@code hedge.*} system properties that bind to nothing, and its durations without a unit, are
     *     logged at WARN here, once
     * @return the named instances
     */
    @Bean
    @ConditionalOnMissingBean
    public HedgeInstances hedgeInstances(
            HedgeProperties properties,
            HedgedExecutorRegistry registry,
            ObjectProvider<HedgeConfigCustomizer> customizers,
            @Qualifier(ATTEMPT_EXECUTOR_BEAN_NAME) ObjectProvider<Executor> attemptExecutor,
            Environment environment) {
        if (environment instanceof ConfigurableEnvironment configurable) {
            HedgePropertyNames.environmentWarnings(configurable).forEach(log::warn);
        }
        return new HedgeInstances(
                properties,
                registry,
                customizers.orderedStream().toList(),
                attemptExecutor.getIfAvailable(),
                () -> Binder.get(environment)
                        .bindOrCreate(
                                "hedge",
                                Bindable.of(HedgeProperties.class),
                                // as @ConfigurationProperties(ignoreUnknownFields = false) binds at start
                                new NoUnboundElementsBindHandler(
                                        BindHandler.DEFAULT, new UnboundElementsSourceFilter())));
    }

    /**
     * The advisor behind {@code @Hedged}. Static and an infrastructure bean, like {@code
     * @Transactional}'s: auto-proxy creators look advisors up early, so it reads {@code
     * hedge.aspect.order} straight from the environment and gets {@link HedgeInstances} on first use.
     *
     * @param instances the named instances, resolved on the first {@code @Hedged} call
     * @param environment holds {@code hedge.aspect.order}
     * @return the advisor
     */
    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static HedgedAdvisor hedgedAdvisor(ObjectProvider<HedgeInstances> instances, Environment environment) {
        int order = Binder.get(environment)
                .bind("hedge.aspect.order", Integer.class)
                .orElse(HedgedAdvisor.DEFAULT_ORDER);
        return new HedgedAdvisor(instances::getObject, order);
    }

    /**
     * Checks every bean with a {@code @Hedged} method once it is created (and proxied): a method its
     * proxy cannot intercept ({@code final} under a class-based proxy, {@code private}, {@code
     * static}) or a bean that was not proxied fails the start, naming the bean and the method.
     *
     * <p>A {@code @Hedged} name not listed under {@code hedge.instances} is logged at WARN, with the
     * nearest listed name.
     *
     * @param environment holds {@code hedge.instances}
     * @return the check
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static HedgedMethodsValidator hedgedMethodsValidator(Environment environment) {
        return new HedgedMethodsValidator(() -> Binder.get(environment)
                .bind("hedge.instances", Bindable.mapOf(String.class, Object.class)) // names only: no value can fail
                .map(Map::keySet)
                .orElse(Set.of()));
    }

    /**
     * Registers Spring's infrastructure auto-proxy creator when nothing else did, as {@code
     * @EnableTransactionManagement} does: Spring Boot's {@code AopAutoConfiguration} registers none
     * without AspectJ when {@code spring.aop.proxy-target-class=false} (or with {@code
     * spring.aop.auto=false}), and then no {@code @Hedged} method would be proxied. A creator
     * registered here uses class-based proxies unless {@code spring.aop.proxy-target-class=false};
     * one registered by the application or Spring Boot is left as it is.
     *
     * @param environment holds {@code spring.aop.proxy-target-class}
     * @return the registrar
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static BeanFactoryPostProcessor hedgedAutoProxyCreatorRegistrar(Environment environment) {
        return beanFactory -> {
            if (beanFactory instanceof BeanDefinitionRegistry registry
                    && !registry.containsBeanDefinition(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME)) {
                AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
                boolean classBased = Binder.get(environment)
                        .bind("spring.aop.proxy-target-class", Boolean.class)
                        .orElse(true);
                if (classBased) {
                    AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
                }
            }
        };
    }
}

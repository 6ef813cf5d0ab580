package io.github.hedge.spring.boot.autoconfigure;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.servererrors.QueryValidationException;
import io.github.hedge.cassandra.HedgeDriverOption;
import io.github.hedge.cassandra.HedgeLoadBalancingPolicy;
import io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.ErrorClassifier;
import io.github.hedge.core.HedgeConfig;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.cassandra.CassandraAutoConfiguration;
import org.springframework.boot.autoconfigure.cassandra.DriverConfigLoaderBuilderCustomizer;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Plugs hedge-cassandra into Spring Boot's auto-configured Cassandra session, chosen by {@code
 * hedge.cassandra.mode}:
 *
 * <ul>
 *   <li>{@code wrapped} (default): the {@link CqlSession} bean Spring Boot creates ({@value
 *       #SESSION_BEAN_NAME}) is replaced by {@link HedgedCqlSession#builder(CqlSession)} around it,
 *       so the application injects a hedged session. A session bean the application defines under
 *       another name is left alone (wrap it yourself), and a bean that already is a {@link
 *       HedgedCqlSession} is not wrapped twice.
 *   <li>{@code policy}: a {@link DriverConfigLoaderBuilderCustomizer} sets the driver's
 *       speculative-execution policy to {@link HedgeSpeculativeExecutionPolicy} and its load-balancing
 *       policy to {@link HedgeLoadBalancingPolicy}, with the instance's options ({@link
 *       HedgeDriverOption}); the driver places and times the executions.
 *   <li>{@code off}: nothing.
 * </ul>
 *
 * <p>Both modes take delay, {@code max-extra-load}, {@code max-attempts}, {@code min-delay} and
 * {@code max-delay} from the hedge instance named by {@code hedge.cassandra.instance} (default
 * {@code cassandra}; its unset values from {@code hedge.defaults}). Only idempotent statements are
 * ever hedged, in either mode. Invalid settings fail the start through {@link
 * InvalidHedgePropertyException}. Needs the driver, hedge-cassandra and Spring Boot's {@link
 * CassandraAutoConfiguration}; if the application defines its own {@code DriverConfigLoader} or
 * {@code CqlSessionBuilder}, Spring Boot skips its customizers, and the policy mode with them.
 */
@AutoConfiguration(before = CassandraAutoConfiguration.class, after = HedgeAutoConfiguration.class)
@ConditionalOnClass({CqlSession.class, HedgedCqlSession.class, CassandraAutoConfiguration.class})
public class HedgeCassandraAutoConfiguration {
    /** The name of the session bean Spring Boot's {@link CassandraAutoConfiguration} defines. */
    public static final String SESSION_BEAN_NAME = "cassandraSession";

    /** Created by Spring. */
    public HedgeCassandraAutoConfiguration() {}

    /** The wrapped mode. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "hedge.cassandra", name = "mode", havingValue = "wrapped", matchIfMissing = true)
    static class Wrapped {
        /**
         * Static and an infrastructure bean, as every {@link BeanPostProcessor}: it reads {@code
         * hedge.*} straight from the environment.
         *
         * @param environment holds {@code hedge.*}
         * @return the post-processor that wraps {@value #SESSION_BEAN_NAME}
         */
        @Bean
        @ConditionalOnMissingBean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static HedgedCqlSessionPostProcessor hedgedCqlSessionPostProcessor(
                Environment environment, ObjectProvider<HedgeInstances> instances) {
            return new HedgedCqlSessionPostProcessor(environment, instances::getIfAvailable);
        }

        /**
         * Gives the session's instance what {@link HedgedCqlSession#defaultConfig()} adds to the
         * properties: a query the server rejects fails on every replica, so it ends the call; and
         * every beaten primary is left to finish ({@code loserSampling(1.0)}: the server runs it to
         * the end anyway, and the session lets the driver read its answer), so what hedging saved is
         * computed from real latencies. Runs before the application's customizers, which may replace
         * both.
         *
         * @param properties the {@code hedge.*} properties
         * @return the customizer
         */
        @Bean
        HedgeConfigCustomizer hedgeCassandraErrorClassifier(HedgeProperties properties) {
            return new CassandraErrorClassifier(properties.getCassandra().getInstance());
        }
    }

    /** Sets the wrapped session's error classifier and loser sampling on its instance. Stateless. */
    static final class CassandraErrorClassifier implements HedgeConfigCustomizer, Ordered {
        private final String instance;

        CassandraErrorClassifier(String instance) {
            this.instance = instance;
        }

        @Override
        public void customize(String instanceName, HedgeConfig.Builder builder) {
            if (instance.equals(instanceName)) {
                builder.errorClassifier(ErrorClassifier.fatalOn(QueryValidationException.class))
                        .loserSampling(1.0);
            }
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE;
        }
    }

    /** The driver-policy mode. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "hedge.cassandra", name = "mode", havingValue = "policy")
    static class Policy {
        /**
         * @param properties the {@code hedge.*} properties
         * @param instances the named instances: the session's instance is their {@linkplain
         *     HedgeInstances#markTemplate template}, copied into the driver's options
         * @return the customizer that installs hedge's driver policies
         */
        @Bean
        DriverConfigLoaderBuilderCustomizer hedgeDriverConfigCustomizer(
                HedgeProperties properties, ObjectProvider<HedgeInstances> instances) {
            String name = properties.getCassandra().getInstance();
            SettingsResolver.Resolved resolved = resolve(properties);
            HedgeProperties.Instance own = properties.getInstances().get(name);
            HedgeProperties.Delay delay = own != null && !own.getDelay().isEmpty()
                    ? own.getDelay()
                    : properties.getDefaults().getDelay();
            String delayPrefix = own != null && !own.getDelay().isEmpty()
                    ? "hedge.instances." + name + ".delay."
                    : "hedge.defaults.delay.";
            if (!delay.getIncreasing().isEmpty()) {
                throw new InvalidHedgePropertyException(
                        delayPrefix + "increasing", "set", "percentile or fixed when hedge.cassandra.mode=policy");
            }
            Duration tick = properties.getCassandra().getTimerTick();
            if (tick != null && (tick.toMillis() < 1 || tick.compareTo(Duration.ofSeconds(1)) > 0)) {
                throw new InvalidHedgePropertyException(
                        "hedge.cassandra.timer-tick", SettingsResolver.fmt(tick), "in [1ms, 1s]");
            }
            HedgeInstances named = instances.getIfAvailable();
            if (named != null) {
                named.markTemplate(name, "hedge.cassandra.mode=policy");
            }
            HedgeInstanceSettings s = resolved.settings();
            double percentile = delay.getPercentile() != null ? delay.getPercentile() : 1.0 - s.maxExtraLoad();
            return builder -> {
                builder.withString(
                                DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS,
                                HedgeSpeculativeExecutionPolicy.class.getName())
                        .withString(
                                DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS,
                                HedgeLoadBalancingPolicy.class.getName())
                        .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, s.maxAttempts())
                        .withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, s.maxExtraLoad())
                        .withDuration(HedgeDriverOption.MIN_DELAY, s.minDelay())
                        .withDuration(HedgeDriverOption.MAX_DELAY, s.maxDelay());
                if (delay.getFixed() != null) {
                    Duration fixed = clamp(delay.getFixed(), s.minDelay(), s.maxDelay());
                    builder.withString(HedgeDriverOption.DELAY_KIND, "fixed")
                            .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, fixed);
                } else {
                    builder.withString(HedgeDriverOption.DELAY_KIND, "percentile")
                            .withDouble(HedgeDriverOption.PERCENTILE, percentile);
                }
                if (tick != null) {
                    builder.withDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, tick);
                }
            };
        }
    }

    static SettingsResolver.Resolved resolve(HedgeProperties properties) {
        String name = properties.getCassandra().getInstance();
        return SettingsResolver.resolve(
                name, properties.getDefaults(), properties.getInstances().get(name));
    }

    private static Duration clamp(Duration v, Duration min, Duration max) {
        return v.compareTo(min) < 0 ? min : v.compareTo(max) > 0 ? max : v;
    }

    /**
     * Replaces Spring Boot's {@value #SESSION_BEAN_NAME} with a {@link HedgedCqlSession} around it,
     * configured from {@code hedge.*}. The session's executor is the instance's executor in {@link
     * HedgeInstances}' registry ({@link HedgedCqlSession.Builder#registry}), so the {@code hedges}
     * endpoint and the registry's meters list it, and a runtime change of the instance (endpoint write,
     * refresh) reaches the session at its next statement. Without {@link HedgeInstances} the session
     * gets an executor of its own. Closing the context closes the wrapper, which closes the session.
     * Thread-safe (stateless after construction).
     */
    public static final class HedgedCqlSessionPostProcessor implements BeanPostProcessor {
        private final Environment environment;
        private final Supplier<HedgeInstances> instances;

        /**
         * @param environment holds {@code hedge.*}, bound again when the session is created
         * @param instances the named instances, asked for when the session is created; may supply
         *     null (then the session's executor is its own, outside any registry)
         * @throws InvalidHedgePropertyException when the instance's settings are invalid: checked here so
         *     the application fails at start even though Spring Boot creates its session lazily
         */
        public HedgedCqlSessionPostProcessor(Environment environment, Supplier<HedgeInstances> instances) {
            this.environment = Objects.requireNonNull(environment, "environment must not be null");
            this.instances = Objects.requireNonNull(instances, "instances must not be null");
            resolve(Binder.get(environment).bindOrCreate("hedge", HedgeProperties.class));
        }

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
            if (!SESSION_BEAN_NAME.equals(beanName)
                    || !(bean instanceof CqlSession session)
                    || bean instanceof HedgedCqlSession) {
                return bean;
            }
            HedgeProperties properties = Binder.get(environment).bindOrCreate("hedge", HedgeProperties.class);
            SettingsResolver.Resolved resolved = resolve(properties);
            String name = properties.getCassandra().getInstance();
            HedgeConfig config = SettingsResolver.toBuilder(name, resolved)
                    // as HedgedCqlSession.defaultConfig(): a query the server rejects fails on every replica
                    .errorClassifier(ErrorClassifier.fatalOn(QueryValidationException.class))
                    .build();
            HedgedCqlSession.Builder builder =
                    HedgedCqlSession.builder(session).name(name).hedgeConfig(config);
            HedgeInstances named = instances.get();
            if (named != null) {
                named.executor(name); // built by HedgeInstances: properties, customizers, runtime changes
                builder.registry(named.registry());
            }
            return builder.build();
        }
    }
}

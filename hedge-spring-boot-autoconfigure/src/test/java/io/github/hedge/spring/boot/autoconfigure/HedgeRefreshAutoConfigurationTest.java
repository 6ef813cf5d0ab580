package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hedge.core.HedgedExecutor;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.autoconfigure.ConfigurationPropertiesRebinderAutoConfiguration;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.core.env.MapPropertySource;

/** Spring Cloud's {@code EnvironmentChangeEvent}, as {@code /actuator/refresh} publishes it. */
class HedgeRefreshAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HedgeAutoConfiguration.class, HedgeRefreshAutoConfiguration.class))
            .withPropertyValues("hedge.instances.a.delay.fixed=20ms");

    @Test
    void should_reconfigure_an_instance_when_its_properties_change_in_the_environment() {
        runner.run(ctx -> {
            HedgedExecutor before = executor(ctx);
            change(ctx, "hedge.instances.a.delay.fixed", "7ms");
            assertThat(executor(ctx).currentDelayNanos())
                    .isEqualTo(Duration.ofMillis(7).toNanos());
            assertThat(executor(ctx).latencyTracker()).isSameAs(before.latencyTracker());
        });
    }

    @Test
    void should_keep_the_last_valid_configuration_when_the_new_value_is_invalid() {
        runner.run(ctx -> {
            HedgedExecutor before = executor(ctx);
            change(ctx, "hedge.instances.a.max-extra-load", "3");
            assertThat(executor(ctx)).isSameAs(before);
        });
    }

    @Test
    void should_keep_the_last_valid_configuration_when_a_refreshed_key_is_misspelt_or_of_the_wrong_type() {
        Logger logger = (Logger) LoggerFactory.getLogger(HedgeRefreshAutoConfiguration.class);
        ListAppender<ILoggingEvent> warnings = new ListAppender<>();
        warnings.start();
        logger.addAppender(warnings);
        try {
            runner.run(ctx -> {
                HedgedExecutor before = executor(ctx);
                change(ctx, "hedge.instances.a.max-attemps", "3");
                assertThat(executor(ctx)).isSameAs(before);
                change(ctx, "hedge.instances.a.max-attempts", "two");
                assertThat(executor(ctx)).isSameAs(before);
            });
        } finally {
            logger.detachAppender(warnings);
        }
        assertThat(warnings.list)
                .extracting(ILoggingEvent::getFormattedMessage)
                .satisfiesExactly(
                        misspelt -> assertThat(misspelt)
                                .contains("Unknown property 'hedge.instances.a.max-attemps'")
                                .contains("did you mean 'hedge.instances.a.max-attempts'?"),
                        wrongType -> assertThat(wrongType)
                                .contains("hedge.instances.a.max-attempts")
                                .contains("two"));
    }

    @Test
    void should_build_unlisted_instances_from_the_last_valid_defaults_when_spring_cloud_rebinds_an_invalid_value() {
        // Spring Cloud's rebinder binds the HedgeProperties bean again, in place, whatever hedge accepts
        runner.withConfiguration(AutoConfigurations.of(ConfigurationPropertiesRebinderAutoConfiguration.class))
                .run(ctx -> {
                    ctx.getEnvironment()
                            .getPropertySources()
                            .addFirst(new MapPropertySource("changed", Map.of("hedge.defaults.max-extra-load", "3")));
                    ctx.publishEvent(new EnvironmentChangeEvent(
                            ctx.getSourceApplicationContext(), Set.of("hedge.defaults.max-extra-load")));
                    assertThat(ctx.getBean(HedgeProperties.class).getDefaults().getMaxExtraLoad())
                            .as("the bean was rebound")
                            .isEqualTo(3.0);
                    HedgedExecutor unlisted = ctx.getBean(HedgeInstances.class).executor("unlisted");
                    assertThat(unlisted.config().budgetRatio()).isEqualTo(0.05);
                });
    }

    @Test
    void should_not_build_an_executor_for_a_template_when_its_properties_change() {
        runner.withPropertyValues("hedge.instances.t.max-extra-load=0.5").run(ctx -> {
            HedgeInstances instances = ctx.getBean(HedgeInstances.class);
            assertThat(instances.registry().find("t")).isPresent(); // listed: built at start
            instances.markTemplate("t", "an adapter"); // as hedge.grpc does with its instance
            assertThat(instances.registry().find("t")).isEmpty();

            change(ctx, "hedge.instances.t.max-extra-load", "0.2");
            change(ctx, "hedge.instances.a.delay.fixed", "7ms");
            assertThat(instances.registry().find("t")).isEmpty();
            assertThat(instances.names()).containsExactly("a");
            assertThat(executor(ctx).currentDelayNanos())
                    .isEqualTo(Duration.ofMillis(7).toNanos());
        });
    }

    @Test
    void should_not_rebuild_anything_when_no_hedge_key_changed() {
        runner.run(ctx -> {
            HedgedExecutor before = executor(ctx);
            ctx.getEnvironment()
                    .getPropertySources()
                    .addFirst(new MapPropertySource("changed", Map.of("hedge.instances.a.delay.fixed", "7ms")));
            ctx.publishEvent(new EnvironmentChangeEvent(ctx, Set.of("server.port")));
            assertThat(executor(ctx)).isSameAs(before);
        });
    }

    @Test
    void should_not_listen_when_spring_cloud_is_absent_or_refresh_is_disabled() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.cloud"))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx).doesNotHaveBean("hedgeEnvironmentChangeListener");
                });
        runner.withPropertyValues("hedge.refresh.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean("hedgeEnvironmentChangeListener"));
    }

    private static HedgedExecutor executor(AssertableApplicationContext ctx) {
        return ctx.getBean(HedgeInstances.class).executor("a");
    }

    private static void change(AssertableApplicationContext ctx, String key, String value) {
        ctx.getEnvironment().getPropertySources().addFirst(new MapPropertySource("changed-" + key, Map.of(key, value)));
        ctx.publishEvent(new EnvironmentChangeEvent(ctx, Set.of(key)));
    }
}

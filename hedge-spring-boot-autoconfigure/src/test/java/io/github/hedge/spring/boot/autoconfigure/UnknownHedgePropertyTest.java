package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * A {@code hedge.*} key that binds to nothing fails the start, naming the key and the nearest valid
 * one; every valid key, in each of Spring Boot's relaxed forms, still starts.
 */
class UnknownHedgePropertyTest {
    private static final Path DOC = Path.of("..", "docs", "spring-boot.md");

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HedgeAutoConfiguration.class));

    @ParameterizedTest
    @CsvSource({
        "hedge.instances.users.max-extra-lod=0.5, hedge.instances.users.max-extra-load",
        "hedge.instances.users.maxExtraLod=0.5, hedge.instances.users.max-extra-load",
        "hedge.instances.users.max-attemps=3, hedge.instances.users.max-attempts",
        "hedge.instances.users.timout=1s, hedge.instances.users.timeout",
        "hedge.instances.users.percentile=0.9, hedge.instances.users.delay.percentile",
        "hedge.instances.users.delay.fix=20ms, hedge.instances.users.delay.fixed",
        "hedge.instance.users.idempotent=true, hedge.instances.users.idempotent",
        "hedge.default.max-delay=1s, hedge.defaults.max-delay",
        "hedge.defaults.idempotant=true, hedge.defaults.idempotent",
        "hedge.grpc.methods[shop.Catalog/GetItem].idempotnt=true, hedge.grpc.methods[shop.Catalog/GetItem].idempotent",
        "hedge.grpc.non-fatal-code=UNAVAILABLE, hedge.grpc.non-fatal-codes",
        "hedge.cassandra.mod=off, hedge.cassandra.mode",
        "hedge.aspect.ordr=5, hedge.aspect.order",
        // a map key with dots or a slash needs brackets
        "hedge.grpc.methods.shop.Catalog/GetItem.idempotent=true, hedge.grpc.methods[shop.Catalog/GetItem].idempotent",
        "hedge.grpc.methods.shop.Catalog/*.delay.fixed=5ms, hedge.grpc.methods[shop.Catalog/*].delay.fixed",
        "hedge.instances.user.reads.idempotent=true, hedge.instances[user.reads].idempotent",
    })
    void should_fail_the_start_naming_the_key_and_the_nearest_valid_one_when_a_hedge_key_is_misspelt(
            String property, String nearest) {
        String key = property.substring(0, property.indexOf('='));
        runner.withPropertyValues(property).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasRootCauseInstanceOf(UnboundConfigurationPropertiesException.class);
            FailureAnalysis analysis = new UnknownHedgePropertyFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(analysis).isNotNull();
            assertThat(analysis.getDescription())
                    .startsWith("Invalid hedge configuration:\nUnknown property '" + key + "'")
                    .endsWith("; did you mean '" + nearest + "'?");
        });
    }

    @Test
    void should_list_the_valid_keys_of_the_block_when_no_key_is_near() {
        runner.withPropertyValues("hedge.instances.users.bogus-setting=1").run(ctx -> {
            FailureAnalysis analysis = new UnknownHedgePropertyFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(analysis.getDescription())
                    .contains("Unknown property 'hedge.instances.users.bogus-setting'")
                    .doesNotContain("did you mean")
                    .contains("valid there: ")
                    .contains("max-extra-load")
                    .contains("delay.percentile");
        });
    }

    @Test
    void should_name_every_unknown_key_when_several_are_misspelt() {
        runner.withPropertyValues("hedge.instances.a.max-attemps=3", "hedge.defaults.timout=1s")
                .run(ctx -> {
                    String description = new UnknownHedgePropertyFailureAnalyzer()
                            .analyze(ctx.getStartupFailure())
                            .getDescription();
                    assertThat(description)
                            .contains("did you mean 'hedge.instances.a.max-attempts'?")
                            .contains("did you mean 'hedge.defaults.timeout'?");
                });
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "hedge.instances.users.max-extra-load",
                "hedge.instances.users.maxExtraLoad",
                "hedge.instances.users.max_extra_load",
                "hedge.instances.users.max-extraload", // Spring Boot ignores dashes when it compares names
                "hedge.instances.users.MAX-EXTRA-LOAD",
            })
    void should_start_and_bind_the_value_when_a_key_uses_a_relaxed_form(String key) {
        runner.withPropertyValues(key + "=0.5").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(HedgeInstances.class).settings("users"))
                    .hasValueSatisfying(s -> assertThat(s.maxExtraLoad()).isEqualTo(0.5));
        });
    }

    @Test
    void should_start_and_bind_the_value_when_the_key_is_an_environment_variable() {
        runner.withInitializer(ctx -> ctx.getEnvironment()
                        .getPropertySources()
                        .addFirst(new SystemEnvironmentPropertySource(
                                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                                Map.of(
                                        "HEDGE_INSTANCES_USERS_MAXEXTRALOAD", "0.5",
                                        "HEDGE_DEFAULTS_MAX_ATTEMPTS", "3"))))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    HedgeInstanceSettings users =
                            ctx.getBean(HedgeInstances.class).settings("users").orElseThrow();
                    assertThat(users.maxExtraLoad()).isEqualTo(0.5);
                    assertThat(users.maxAttempts()).isEqualTo(3);
                });
    }

    @Test
    void should_warn_naming_the_nearest_valid_variable_when_a_hedge_environment_variable_binds_to_nothing() {
        List<String> warnings = warningsAtStart(runner.withInitializer(ctx -> ctx.getEnvironment()
                .getPropertySources()
                .addFirst(new SystemEnvironmentPropertySource(
                        StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                        Map.of(
                                "HEDGE_INSTANCES_USERS_MAXEXTRALOD", "0.5",
                                "HEDGE_INSTANCES_USER_READS_IDEMPOTENT", "true",
                                "HEDGE_INSTANCES_USERS_MAXATTEMPTS", "3",
                                "HEDGE_GRPC_NONFATALCODES_0", "UNAVAILABLE",
                                "OTHER_VARIABLE", "x")))));
        assertThat(warnings)
                .containsExactlyInAnyOrder(
                        "Environment variable HEDGE_INSTANCES_USERS_MAXEXTRALOD binds to no hedge property and is"
                                + " ignored; did you mean HEDGE_INSTANCES_USERS_MAXEXTRALOAD"
                                + " (hedge.instances.users.max-extra-load)?",
                        "Environment variable HEDGE_INSTANCES_USER_READS_IDEMPOTENT binds to no hedge property and is"
                                + " ignored (an instance name with a dash cannot be written in an environment"
                                + " variable; use SPRING_APPLICATION_JSON for it)");
    }

    @Test
    void should_warn_naming_the_nearest_valid_key_when_a_hedge_system_property_binds_to_nothing() {
        List<String> warnings = warningsAtStart(runner.withInitializer(ctx -> ctx.getEnvironment()
                .getPropertySources()
                .addFirst(new MapPropertySource(
                        StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME,
                        Map.of("hedge.defaults.timout", "1s", "hedge.defaults.timeout", "2s")))));
        assertThat(warnings)
                .containsExactly("System property hedge.defaults.timout binds to no hedge property and is ignored;"
                        + " did you mean hedge.defaults.timeout?");
    }

    @Test
    void should_warn_when_a_hedge_duration_has_no_unit() {
        List<String> warnings = warningsAtStart(runner.withPropertyValues(
                "hedge.defaults.timeout=5",
                "hedge.instances.a.max-delay=50ms",
                "hedge.instances.a.min-delay=PT0.001S"));
        assertThat(warnings)
                .containsExactly("hedge.defaults.timeout=5 (test) has no unit, so it is read as 5 ms; write 5ms to"
                        + " keep that, or give the unit you meant (s, m)");
    }

    private static List<String> warningsAtStart(ApplicationContextRunner runner) {
        Logger logger = (Logger) LoggerFactory.getLogger(HedgeAutoConfiguration.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            runner.run(ctx -> assertThat(ctx).hasNotFailed());
        } finally {
            logger.detachAppender(appender);
        }
        List<String> warnings = new ArrayList<>();
        appender.list.stream()
                .filter(e -> e.getLevel() == Level.WARN)
                .forEach(e -> warnings.add(e.getFormattedMessage()));
        return warnings;
    }

    @Test
    void should_start_when_every_property_the_code_binds_is_set() {
        List<String> properties = new ArrayList<>();
        for (String template : HedgePropertyNames.all()) {
            String key = template.replace("instances.*", "instances.users")
                    .replace("methods.*", "methods[shop.Catalog/GetItem]")
                    .replace("clients.*", "clients.users");
            if (key.contains(".delay.fixed") || key.contains(".delay.increasing")) {
                continue; // one delay kind per block: the percentile stands for the others here
            }
            properties.add(key + "=" + sampleValue(key));
        }
        assertThat(properties).hasSizeGreaterThan(30);
        runner.withPropertyValues(properties.toArray(String[]::new))
                .run(ctx -> assertThat(ctx).as("%s", properties).hasNotFailed());
        runner.withPropertyValues(
                        "hedge.defaults.delay.increasing.initial=1ms",
                        "hedge.defaults.delay.increasing.step=1ms",
                        "hedge.defaults.delay.increasing.max=5ms",
                        "hedge.instances.users.delay.fixed=2ms")
                .run(ctx -> assertThat(ctx).hasNotFailed());
    }

    private static String sampleValue(String key) {
        if (key.endsWith("order")) return "5";
        if (key.endsWith("mode")) return "wrapped";
        if (key.endsWith(".instance")) return "users";
        if (key.endsWith("enabled")
                || key.endsWith("idempotent")
                || key.endsWith("load-balancing")
                || key.endsWith("include-targets")
                || key.endsWith("hedge-unlisted")) return "true";
        if (key.endsWith("max-attempts")) return "3";
        if (key.endsWith("max-extra-load") || key.endsWith("loser-sampling")) return "0.1";
        if (key.endsWith("percentile")) return "0.9";
        if (key.endsWith("bytes")) return "1024";
        if (key.endsWith("codes")) return "UNAVAILABLE";
        if (key.endsWith("timer-tick")) return "10ms";
        if (key.endsWith("min-delay")) return "1ms";
        if (key.endsWith("hedged-methods")) return "GET";
        if (key.endsWith("idempotency-key-header")) return "Idempotency-Key";
        if (key.endsWith("idempotent-routes")) return "POST /orders/**";
        if (key.endsWith(".instances")) return "http://127.0.0.1:8080";
        if (key.endsWith("statuses")) return "503";
        return "2s"; // every other leaf is a duration
    }

    @Test
    void should_start_with_every_hedge_property_the_spring_boot_docs_show() throws IOException {
        Map<String, String> shown = docProperties(Files.readString(DOC));
        assertThat(shown)
                .containsKeys(
                        "hedge.defaults.max-extra-load",
                        "hedge.instances.user-reads.delay.percentile",
                        "hedge.instances.search.delay.fixed",
                        "hedge.grpc.methods[shop.Catalog/GetItem].idempotent",
                        "hedge.cassandra.mode");
        List<String> pairs = new ArrayList<>();
        shown.forEach((k, v) -> pairs.add(k + "=" + v));
        runner.withPropertyValues(pairs.toArray(String[]::new))
                .run(ctx -> assertThat(ctx).as("%s", pairs).hasNotFailed());
    }

    /** The hedge.* keys of the page's code blocks: properties lines and YAML blocks. */
    static Map<String, String> docProperties(String markdown) {
        Map<String, String> out = new LinkedHashMap<>();
        Pattern line = Pattern.compile("^(hedge\\.[A-Za-z0-9_.\\[\\]/*-]+)=(\\S+)\\s*$");
        boolean inCode = false;
        Deque<Map.Entry<Integer, String>> yaml = null;
        for (String raw : markdown.split("\n")) {
            if (raw.startsWith("```")) {
                inCode = !inCode;
                yaml = null;
                continue;
            }
            if (!inCode) {
                continue;
            }
            Matcher m = line.matcher(raw.trim());
            if (m.matches()) {
                out.put(m.group(1), m.group(2));
                continue;
            }
            String text = raw.replaceAll("\\s+#.*$", "");
            if (text.equals("hedge:")) {
                yaml = new ArrayDeque<>();
                yaml.push(Map.entry(-1, "hedge"));
                continue;
            }
            if (yaml == null || text.isBlank()) {
                continue;
            }
            int indent = text.length() - text.stripLeading().length();
            while (yaml.peek().getKey() >= indent) {
                yaml.pop();
            }
            String[] kv = text.trim().split(":\\s*", 2);
            List<String> path = new ArrayList<>();
            yaml.descendingIterator().forEachRemaining(e -> path.add(e.getValue()));
            path.add(kv[0]);
            if (kv.length == 2 && !kv[1].isBlank()) {
                out.put(String.join(".", path), kv[1].trim());
            } else {
                yaml.push(Map.entry(indent, kv[0]));
            }
        }
        return out;
    }
}

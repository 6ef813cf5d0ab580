package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.github.hedge.core.internal.AttemptExecutors;
import io.github.hedge.core.spi.Schedulers;
import io.github.hedge.core.spi.Ticker;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md says what the builders do: every documented default is the builders' real
 * default, every documented range is accepted at its edges and refused just outside them with a
 * message that starts with the setting's name, and every public setter of the documented builders
 * has a row. The tables are parsed from the page, so a change on either side fails here.
 */
class ConfigurationReferenceTest {
    private static final Path DOC = Path.of("..", "docs", "configuration.md");
    private static final Pattern TABLE = Pattern.compile("<!-- config-table: (\\w+) -->");
    private static final Duration MAX = Duration.ofDays(365);
    private static final Object REQUIRED = new Object();

    /** A documented row: section, setting, unit, range and default cells. */
    record Row(String section, String setting, String range, String defaultCell) {
        String key() {
            return section + "." + setting;
        }
    }

    enum Kind {
        INT,
        LONG,
        DOUBLE,
        DURATION,
        BOOLEAN,
        OBJECT,
        TEXT
    }

    /**
     * What the test knows of a setting: its kind, the name its messages start with, how to apply a
     * value to a fresh builder (and build), and its real default: a value, {@code null} for "none",
     * {@link #REQUIRED}, or for objects a check of the documented text against the real default.
     */
    record Setting(
            Kind kind, String messageName, Consumer<Object> apply, Supplier<Object> actual, Consumer<String> check) {}

    private static Setting value(Kind kind, String name, Consumer<Object> apply, Supplier<Object> actual) {
        return new Setting(kind, name, apply, actual, null);
    }

    private static Setting object(Kind kind, String name, Consumer<Object> apply, Consumer<String> check) {
        return new Setting(kind, name, apply, null, check);
    }

    private static Duration d(Object o) {
        return (Duration) o;
    }

    private static HedgedExecutor executor(HedgeConfig config) {
        return HedgedExecutor.of("config-reference", config);
    }

    private static final HedgeConfig DEFAULTS = HedgeConfig.ofDefaults();
    private static final PercentileDelay PERCENTILE =
            DelayPolicy.percentile(0.9).build();
    private static final HedgeBudget BUDGET = HedgeBudget.builder().build();
    private static final LatencyTracker TRACKER = LatencyTracker.builder().build();
    private static final CallOptions CALL = CallOptions.builder().build();

    @SuppressWarnings("unchecked")
    static Map<String, Setting> settings() {
        Map<String, Setting> s = new LinkedHashMap<>();
        // HedgeConfig: apply builds an executor, so a value a setter accepts must also run
        s.put(
                "HedgeConfig.maxExtraLoad",
                object(
                        Kind.DOUBLE,
                        "maxExtraLoad",
                        v -> executor(
                                HedgeConfig.builder().maxExtraLoad((Double) v).build()),
                        cell -> {
                            HedgeConfig same = HedgeConfig.builder()
                                    .maxExtraLoad(Double.parseDouble(defaultText(cell)))
                                    .build();
                            assertThat(same.delayPolicy().toString())
                                    .isEqualTo(DEFAULTS.delayPolicy().toString());
                            assertThat(same.budgetRatio()).isEqualTo(DEFAULTS.budgetRatio());
                        }));
        s.put(
                "HedgeConfig.maxAttempts",
                value(
                        Kind.INT,
                        "maxAttempts",
                        v -> executor(
                                HedgeConfig.builder().maxAttempts((Integer) v).build()),
                        DEFAULTS::maxAttempts));
        s.put(
                "HedgeConfig.delay",
                object(Kind.OBJECT, "delay", v -> HedgeConfig.builder().delay((DelayPolicy) v), cell -> {
                    String text = defaultText(cell);
                    Matcher m = Pattern.compile("percentile\\(([0-9.]+)\\), budget feedback on")
                            .matcher(text);
                    assertThat(m.matches()).as("delay default text: %s", text).isTrue();
                    assertThat(DEFAULTS.delayPolicy()).isInstanceOf(PercentileDelay.class);
                    PercentileDelay p = (PercentileDelay) DEFAULTS.delayPolicy();
                    assertThat(p.percentile()).isEqualTo(Double.parseDouble(m.group(1)));
                    assertThat(p.budgetFeedback()).isTrue();
                    // the rest of the percentile builder's defaults apply
                    assertThat(p.toString())
                            .isEqualTo(DelayPolicy.percentile(p.percentile())
                                    .budgetFeedback(true)
                                    .build()
                                    .toString());
                }));
        s.put(
                "HedgeConfig.budgetRatio",
                value(
                        Kind.DOUBLE,
                        "budgetRatio",
                        v -> executor(
                                HedgeConfig.builder().budgetRatio((Double) v).build()),
                        DEFAULTS::budgetRatio));
        s.put(
                "HedgeConfig.budget",
                object(Kind.OBJECT, "budget", v -> HedgeConfig.builder().budget((HedgeBudget) v), cell -> {
                    assertThat(cell)
                            .startsWith("none; each executor builds `HedgeBudget.builder().ratio(budgetRatio)`");
                    assertThat(DEFAULTS.budget()).isEmpty();
                    HedgeBudget own = executor(DEFAULTS).budget();
                    assertThat(own.ratio()).isEqualTo(DEFAULTS.budgetRatio());
                    assertThat(own.window()).isEqualTo(BUDGET.window());
                    assertThat(own.burst()).isEqualTo(BUDGET.burst());
                    assertThat(own.minBurst()).isEqualTo(BUDGET.minBurst());
                    assertThat(own.minPerSecond()).isEqualTo(BUDGET.minPerSecond());
                }));
        s.put(
                "HedgeConfig.latencyTracker",
                object(
                        Kind.OBJECT,
                        "latencyTracker",
                        v -> HedgeConfig.builder().latencyTracker((LatencyTracker) v),
                        text -> {
                            assertThat(text).startsWith("none; each executor builds one");
                            assertThat(DEFAULTS.latencyTracker()).isEmpty();
                            LatencyTracker own = executor(DEFAULTS).latencyTracker();
                            assertThat(own.window()).isEqualTo(TRACKER.window());
                            assertThat(own.refreshInterval()).isEqualTo(TRACKER.refreshInterval());
                            assertThat(text).contains("`maxWindowAge`: 1 h");
                            assertThat(own.maxWindowAge()).isEqualTo(Duration.ofHours(1));
                            assertThat(own.maxTargets()).isEqualTo(TRACKER.maxTargets());
                            // 300 / (1 - p) within [1000, 300000]
                            assertThat(text).contains("`300 / (1 - p)` within [1000, 300000]");
                            assertThat(own.minWindowSamples()).isEqualTo(6_000); // p95
                            assertThat(windowSamplesOf(0.5)).isEqualTo(1_000);
                            assertThat(windowSamplesOf(0.999)).isEqualTo(300_000);
                            assertThat(windowSamplesOf(0.99999)).isEqualTo(300_000);
                            // combined with another policy: as many as the percentile alone
                            assertThat(text).contains("`DelayPolicy.min`/`max` of one");
                            assertThat(executor(HedgeConfig.builder()
                                                    .delay(DelayPolicy.parse("MIN(99p,50ms)"))
                                                    .build())
                                            .latencyTracker()
                                            .minWindowSamples())
                                    .isEqualTo(30_000);
                            assertThat(executor(HedgeConfig.builder()
                                                    .delay(DelayPolicy.fixed(Duration.ofMillis(5)))
                                                    .build())
                                            .latencyTracker()
                                            .minWindowSamples())
                                    .isEqualTo(TRACKER.minWindowSamples());
                        }));
        s.put(
                "HedgeConfig.idempotentByDefault",
                value(
                        Kind.BOOLEAN,
                        "idempotentByDefault",
                        v -> HedgeConfig.builder().idempotentByDefault((Boolean) v),
                        DEFAULTS::idempotentByDefault));
        s.put(
                "HedgeConfig.deadline",
                value(
                        Kind.DURATION,
                        "deadline",
                        v -> executor(HedgeConfig.builder().deadline(d(v)).build()),
                        () -> DEFAULTS.deadline().orElse(null)));
        s.put(
                "HedgeConfig.errorClassifier",
                object(
                        Kind.OBJECT,
                        "errorClassifier",
                        v -> HedgeConfig.builder().errorClassifier((ErrorClassifier) v),
                        cell -> {
                            assertThat(defaultText(cell)).isEqualTo("ErrorClassifier.defaults()");
                            ErrorClassifier c = DEFAULTS.errorClassifier();
                            assertThat(c.classify(new StackOverflowError())).isEqualTo(ErrorClassifier.Decision.FATAL);
                            assertThat(c.classify(new java.io.IOException()))
                                    .isEqualTo(ErrorClassifier.Decision.RETRYABLE);
                            assertThat(c.classify(new IllegalStateException()))
                                    .isEqualTo(ErrorClassifier.Decision.RETRYABLE);
                        }));
        s.put(
                "HedgeConfig.ticker",
                object(
                        Kind.OBJECT,
                        "ticker",
                        v -> HedgeConfig.builder().ticker((Ticker) v),
                        cell -> assertSystemTicker(defaultText(cell), DEFAULTS.ticker())));
        s.put(
                "HedgeConfig.scheduler",
                object(
                        Kind.OBJECT,
                        "scheduler",
                        v -> HedgeConfig.builder().scheduler((io.github.hedge.core.spi.HedgeScheduler) v),
                        cell -> {
                            assertThat(defaultText(cell)).isEqualTo("Schedulers.shared()");
                            assertThat(DEFAULTS.scheduler()).isSameAs(Schedulers.shared());
                        }));
        s.put(
                "HedgeConfig.attemptExecutor",
                object(
                        Kind.OBJECT,
                        "attemptExecutor",
                        v -> HedgeConfig.builder().attemptExecutor((java.util.concurrent.Executor) v),
                        cell -> {
                            assertThat(defaultText(cell))
                                    .isEqualTo("a virtual thread per attempt on JDK 21+, else a shared cached pool of"
                                            + " daemon threads");
                            assertThat(DEFAULTS.attemptExecutor()).isSameAs(AttemptExecutors.defaultExecutor());
                        }));
        s.put(
                "HedgeConfig.contextPropagators",
                object(
                        Kind.OBJECT,
                        "contextPropagators",
                        v -> HedgeConfig.builder()
                                .contextPropagators(v == null ? null : Collections.singletonList(null)),
                        cell -> {
                            assertThat(defaultText(cell)).isEqualTo("[]");
                            assertThat(DEFAULTS.contextPropagators()).isEmpty();
                        }));
        s.put(
                "HedgeConfig.callDecorator",
                object(
                        Kind.OBJECT,
                        "callDecorator",
                        v -> HedgeConfig.builder().callDecorator((io.github.hedge.core.spi.CallDecorator) v),
                        cell -> {
                            assertThat(defaultText(cell)).isEqualTo("none");
                            assertThat(DEFAULTS.callDecorator()).isNull();
                        }));
        s.put(
                "HedgeConfig.loserSampling",
                value(
                        Kind.DOUBLE,
                        "loserSampling",
                        v -> executor(
                                HedgeConfig.builder().loserSampling((Double) v).build()),
                        DEFAULTS::loserSampling));
        s.put(
                "HedgeConfig.savingsWindow",
                value(
                        Kind.DURATION,
                        "savingsWindow",
                        v -> executor(HedgeConfig.builder().savingsWindow(d(v)).build()),
                        DEFAULTS::savingsWindow));

        // DelayPolicy factories: required parameters; the others set so that the probed one decides
        s.put("DelayPolicy.fixed.delay", value(Kind.DURATION, "delay", v -> DelayPolicy.fixed(d(v)), () -> REQUIRED));
        s.put(
                "DelayPolicy.increasing.initial",
                value(Kind.DURATION, "initial", v -> DelayPolicy.increasing(d(v), Duration.ZERO, MAX), () -> REQUIRED));
        s.put(
                "DelayPolicy.increasing.step",
                value(Kind.DURATION, "step", v -> DelayPolicy.increasing(Duration.ZERO, d(v), MAX), () -> REQUIRED));
        s.put(
                "DelayPolicy.increasing.max",
                value(
                        Kind.DURATION,
                        "max",
                        v -> DelayPolicy.increasing(Duration.ZERO, Duration.ZERO, d(v)),
                        () -> REQUIRED));
        s.put(
                "DelayPolicy.exponential.initial",
                value(Kind.DURATION, "initial", v -> DelayPolicy.exponential(d(v), 2, MAX), () -> REQUIRED));
        s.put(
                "DelayPolicy.exponential.multiplier",
                value(
                        Kind.DOUBLE,
                        "multiplier",
                        v -> DelayPolicy.exponential(Duration.ofMillis(1), (Double) v, MAX),
                        () -> REQUIRED));
        s.put(
                "DelayPolicy.exponential.max",
                value(
                        Kind.DURATION,
                        "max",
                        v -> DelayPolicy.exponential(Duration.ofNanos(1), 2, d(v)),
                        () -> REQUIRED));
        s.put(
                "DelayPolicy.percentile.percentile",
                value(
                        Kind.DOUBLE,
                        "percentile",
                        v -> DelayPolicy.percentile((Double) v).build(),
                        () -> REQUIRED));

        // PercentileDelay builder
        s.put(
                "PercentileDelay.min",
                value(
                        Kind.DURATION,
                        "min",
                        v -> DelayPolicy.percentile(0.9).min(d(v)).max(MAX).build(),
                        PERCENTILE::min));
        s.put(
                "PercentileDelay.max",
                value(
                        Kind.DURATION,
                        "max",
                        v -> DelayPolicy.percentile(0.9).max(d(v)).build(),
                        PERCENTILE::max));
        s.put(
                "PercentileDelay.minSamples",
                value(
                        Kind.LONG,
                        "minSamples",
                        v -> DelayPolicy.percentile(0.9).minSamples((Long) v).build(),
                        PERCENTILE::minSamples));
        s.put(
                "PercentileDelay.fallback",
                object(Kind.OBJECT, "fallback", v -> DelayPolicy.percentile(0.9).fallback((DelayPolicy) v), cell -> {
                    assertThat(defaultText(cell)).startsWith("the warm-up bound");
                    assertThat(PERCENTILE.fallback()).isInstanceOf(WarmUpDelay.class);
                }));
        s.put(
                "PercentileDelay.scope",
                object(
                        Kind.OBJECT,
                        "scope",
                        v -> DelayPolicy.percentile(0.9).scope((PercentileDelay.Scope) v),
                        cell -> assertThat(PERCENTILE.scope())
                                .isEqualTo(PercentileDelay.Scope.valueOf(defaultText(cell)))));
        s.put(
                "PercentileDelay.budgetFeedback",
                value(
                        Kind.BOOLEAN,
                        "budgetFeedback",
                        v -> DelayPolicy.percentile(0.9).budgetFeedback((Boolean) v),
                        PERCENTILE::budgetFeedback));

        // HedgeBudget builder
        s.put(
                "HedgeBudget.ratio",
                value(
                        Kind.DOUBLE,
                        "ratio",
                        v -> HedgeBudget.builder().ratio((Double) v).build(),
                        BUDGET::ratio));
        s.put(
                "HedgeBudget.window",
                value(
                        Kind.DURATION,
                        "window",
                        v -> HedgeBudget.builder().window(d(v)).build(),
                        BUDGET::window));
        s.put(
                "HedgeBudget.burst",
                value(
                        Kind.DOUBLE,
                        "burst",
                        v -> HedgeBudget.builder().burst((Double) v).build(),
                        BUDGET::burst));
        s.put(
                "HedgeBudget.minBurst",
                value(
                        Kind.DOUBLE,
                        "minBurst",
                        v -> HedgeBudget.builder().minBurst((Double) v).build(),
                        BUDGET::minBurst));
        s.put(
                "HedgeBudget.initialTokens",
                value(
                        Kind.DOUBLE,
                        "initialTokens",
                        // minBurst at its largest, so the setter's own range is what is probed
                        v -> HedgeBudget.builder()
                                .minBurst(1_000_000)
                                .initialTokens((Double) v)
                                .build(),
                        BUDGET::initialTokens));
        s.put(
                "HedgeBudget.minPerSecond",
                value(
                        Kind.DOUBLE,
                        "minPerSecond",
                        v -> HedgeBudget.builder().minPerSecond((Double) v).build(),
                        BUDGET::minPerSecond));
        s.put(
                "HedgeBudget.ticker",
                object(
                        Kind.OBJECT,
                        "ticker",
                        v -> HedgeBudget.builder().ticker((Ticker) v),
                        cell -> assertSystemTicker(defaultText(cell), BUDGET.ticker())));

        // LatencyTracker builder: the probed setter first, the others set so that build() agrees
        s.put(
                "LatencyTracker.window",
                value(
                        Kind.DURATION,
                        "window",
                        v -> LatencyTracker.builder()
                                .window(d(v))
                                .refreshInterval(d(v))
                                .maxWindowAge(d(v))
                                .build(),
                        TRACKER::window));
        s.put(
                "LatencyTracker.refreshInterval",
                value(
                        Kind.DURATION,
                        "refreshInterval",
                        v -> LatencyTracker.builder()
                                .refreshInterval(d(v))
                                .window(d(v))
                                .maxWindowAge(d(v))
                                .build(),
                        TRACKER::refreshInterval));
        s.put(
                "LatencyTracker.maxWindowAge",
                value(
                        Kind.DURATION,
                        "maxWindowAge",
                        v -> LatencyTracker.builder()
                                .maxWindowAge(d(v))
                                .window(d(v))
                                .refreshInterval(d(v))
                                .build(),
                        TRACKER::maxWindowAge));
        s.put(
                "LatencyTracker.minWindowSamples",
                value(
                        Kind.LONG,
                        "minWindowSamples",
                        v -> LatencyTracker.builder().minWindowSamples((Long) v).build(),
                        TRACKER::minWindowSamples));
        s.put(
                "LatencyTracker.sizedFor",
                object(
                        Kind.OBJECT,
                        "policy",
                        v -> LatencyTracker.builder().sizedFor((DelayPolicy) v).build(),
                        text -> {
                            assertThat(text).isEqualTo("not applied");
                            assertThat(TRACKER.minWindowSamples()).isEqualTo(1_000);
                            assertThat(TRACKER.maxWindowAge()).isEqualTo(Duration.ofMinutes(10));
                            LatencyTracker sized = LatencyTracker.builder()
                                    .sizedFor(DelayPolicy.percentile(0.99).build())
                                    .build();
                            assertThat(sized.minWindowSamples()).isEqualTo(30_000);
                            assertThat(sized.maxWindowAge()).isEqualTo(Duration.ofHours(1));
                        }));
        s.put(
                "LatencyTracker.maxTargets",
                value(
                        Kind.INT,
                        "maxTargets",
                        v -> LatencyTracker.builder().maxTargets((Integer) v).build(),
                        TRACKER::maxTargets));
        s.put(
                "LatencyTracker.ticker",
                object(Kind.OBJECT, "ticker", v -> LatencyTracker.builder().ticker((Ticker) v), cell -> assertThat(
                                defaultText(cell))
                        .isEqualTo("Ticker.system()")));

        // CallOptions builder: unset means "the executor's"
        s.put(
                "CallOptions.idempotent",
                value(
                        Kind.BOOLEAN,
                        "idempotent",
                        v -> CallOptions.builder().idempotent((Boolean) v),
                        CALL::declaredIdempotent));
        s.put(
                "CallOptions.deadline",
                value(Kind.DURATION, "deadline", v -> CallOptions.builder().deadline(d(v)), CALL::deadline));
        s.put(
                "CallOptions.operation",
                value(Kind.TEXT, "operation", v -> CallOptions.builder().operation((String) v), CALL::operation));
        s.put(
                "CallOptions.details",
                value(Kind.OBJECT, "details", v -> CallOptions.builder().details((Supplier<String>) v), CALL::details));
        s.put(
                "CallOptions.errorClassifier",
                value(
                        Kind.OBJECT,
                        "errorClassifier",
                        v -> CallOptions.builder().errorClassifier((ErrorClassifier) v),
                        CALL::errorClassifier));
        return s;
    }

    private static long windowSamplesOf(double p) {
        return executor(HedgeConfig.builder()
                        .delay(DelayPolicy.percentile(p).build())
                        .build())
                .latencyTracker()
                .minWindowSamples();
    }

    private static void assertSystemTicker(String text, Ticker ticker) {
        assertThat(text).isEqualTo("Ticker.system()");
        long before = System.nanoTime();
        long read = ticker.nanoTime();
        long after = System.nanoTime();
        assertThat(read).isBetween(before, after);
    }

    static List<Row> rows() throws Exception {
        List<String> lines = Files.readAllLines(DOC, StandardCharsets.UTF_8);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = TABLE.matcher(lines.get(i));
            if (!m.matches()) {
                continue;
            }
            String section = m.group(1);
            assertThat(lines.get(i + 1)).as("header of table %s", section).startsWith("| setting |");
            int j = i + 3;
            for (; j < lines.size() && lines.get(j).startsWith("|"); j++) {
                String[] cells = lines.get(j).split("\\|", -1);
                assertThat(cells).as("row %s", lines.get(j)).hasSize(7);
                String setting = cells[1].trim().replace("`", "");
                rows.add(new Row(section, setting, cells[4].trim(), cells[5].trim()));
            }
            assertThat(j).as("table %s has rows", section).isGreaterThan(i + 3);
        }
        return rows;
    }

    @Test
    void should_document_every_setting_the_test_knows_and_no_other_when_the_tables_are_parsed() throws Exception {
        Set<String> documented = new TreeSet<>();
        for (Row r : rows()) {
            assertThat(documented.add(r.key()))
                    .as("documented twice: %s", r.key())
                    .isTrue();
        }
        assertThat(documented).isEqualTo(new TreeSet<>(settings().keySet()));
    }

    @Test
    void should_list_every_public_setter_when_a_builder_gains_one() throws Exception {
        Set<String> documented = new TreeSet<>();
        rows().forEach(r -> documented.add(r.key()));
        Map<String, Class<?>> builders = Map.of(
                "HedgeConfig", HedgeConfig.Builder.class,
                "PercentileDelay", PercentileDelay.Builder.class,
                "HedgeBudget", HedgeBudget.Builder.class,
                "LatencyTracker", LatencyTracker.Builder.class,
                "CallOptions", CallOptions.Builder.class);
        for (Map.Entry<String, Class<?>> b : builders.entrySet()) {
            for (Method m : b.getValue().getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && !m.getName().equals("build")) {
                    assertThat(documented)
                            .as("%s.Builder.%s is not in docs/configuration.md", b.getKey(), m.getName())
                            .contains(b.getKey() + "." + m.getName());
                }
            }
        }
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        for (Method m : DelayPolicy.class.getDeclaredMethods()) {
            if (Modifier.isStatic(m.getModifiers()) && Modifier.isPublic(m.getModifiers())) {
                boolean inTable = documented.stream().anyMatch(k -> k.startsWith("DelayPolicy." + m.getName() + "."));
                assertThat(inTable || doc.contains("`DelayPolicy." + m.getName() + "("))
                        .as("DelayPolicy.%s is not in docs/configuration.md", m.getName())
                        .isTrue();
            }
        }
    }

    @Test
    void should_match_the_builders_defaults_when_the_defaults_column_is_parsed() throws Exception {
        Map<String, Setting> settings = settings();
        for (Row r : rows()) {
            Setting s = settings.get(r.key());
            String text = defaultText(r.defaultCell());
            if (s.check() != null) {
                try {
                    s.check().accept(r.defaultCell());
                } catch (AssertionError e) {
                    throw new AssertionError(
                            "default of " + r.key() + " (\"" + r.defaultCell() + "\"): " + e.getMessage(), e);
                }
                continue;
            }
            Object actual = s.actual().get();
            Object documented;
            if (text.equals("required")) {
                documented = REQUIRED;
            } else if (text.equals("none")) {
                documented = null;
            } else {
                documented = parse(s.kind(), text);
            }
            assertThat(actual)
                    .as("default of %s, documented \"%s\"", r.key(), r.defaultCell())
                    .isEqualTo(documented);
        }
    }

    @Test
    void should_refuse_just_outside_and_accept_at_the_edge_when_a_documented_range_is_probed() throws Exception {
        Map<String, Setting> settings = settings();
        int probed = 0;
        for (Row r : rows()) {
            Setting s = settings.get(r.key());
            List<Object[]> probes = probes(s.kind(), r.range());
            for (Object[] p : probes) {
                Object value = p[0];
                boolean valid = (Boolean) p[1];
                String what = r.key() + " = " + value + " (documented range " + r.range() + ")";
                if (valid) {
                    try {
                        s.apply().accept(value);
                    } catch (RuntimeException e) {
                        fail(what + " was refused: " + e);
                    }
                } else {
                    assertThatThrownBy(() -> s.apply().accept(value))
                            .as(what)
                            .isInstanceOfAny(IllegalArgumentException.class, NullPointerException.class)
                            .message()
                            .startsWith(s.messageName() + " must");
                }
                probed++;
            }
        }
        assertThat(probed).isGreaterThan(80);
    }

    @Test
    void should_refuse_the_cross_checks_naming_both_settings_when_they_disagree() {
        assertThatThrownBy(() -> DelayPolicy.percentile(0.9)
                        .min(Duration.ofMillis(20))
                        .max(Duration.ofMillis(10))
                        .build())
                .hasMessageStartingWith("min must be <= max");
        assertThatThrownBy(() -> DelayPolicy.increasing(Duration.ofMillis(20), Duration.ZERO, Duration.ofMillis(10)))
                .hasMessageStartingWith("initial must be <= max");
        assertThatThrownBy(
                        () -> HedgeBudget.builder().minBurst(5).initialTokens(6).build())
                .hasMessageStartingWith("initialTokens must be in [0, minBurst = 5.0]");
        assertThatThrownBy(() -> DelayPolicy.exponential(Duration.ofMillis(20), 2, Duration.ofMillis(10)))
                .hasMessageStartingWith("initial must be <= max");
        assertThatThrownBy(() -> LatencyTracker.builder()
                        .window(Duration.ofSeconds(1))
                        .refreshInterval(Duration.ofSeconds(2))
                        .build())
                .hasMessageStartingWith("refreshInterval must be <= window");
        assertThatThrownBy(() ->
                        LatencyTracker.builder().window(Duration.ofMinutes(20)).build())
                .hasMessageStartingWith("window must be <= maxWindowAge");
        assertThatThrownBy(() -> LatencyTracker.builder()
                        .refreshInterval(Duration.ofMillis(10))
                        .window(Duration.ofSeconds(7))
                        .build())
                .hasMessageStartingWith("window / refreshInterval must be <= 600");
        LatencyTracker.builder()
                .refreshInterval(Duration.ofMillis(10))
                .window(Duration.ofSeconds(6))
                .maxWindowAge(Duration.ofSeconds(1000))
                .build();
        assertThatThrownBy(() -> LatencyTracker.builder()
                        .refreshInterval(Duration.ofMillis(10))
                        .window(Duration.ofSeconds(6))
                        .maxWindowAge(Duration.ofMillis(1_000_010))
                        .build())
                .hasMessageStartingWith("maxWindowAge / refreshInterval must be <= 100000");
    }

    @Test
    void should_aim_at_the_documented_percentiles_when_budget_feedback_sees_a_low_bucket() throws Exception {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("k = ([0-9.]+), ([0-9.]+), ([0-9.]+) below 1/(\\d+), 1/(\\d+), 1/(\\d+)")
                .matcher(doc);
        assertThat(m.find()).as("budgetFeedback's row states k and the fills").isTrue();
        double[] k = {Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3))};
        double[] below = {
            1.0 / Integer.parseInt(m.group(4)), 1.0 / Integer.parseInt(m.group(5)), 1.0 / Integer.parseInt(m.group(6))
        };
        long[] now = {0};
        LatencyTracker tracker = LatencyTracker.builder().ticker(() -> now[0]).build();
        for (int rep = 0; rep < 10; rep++) {
            for (long ms = 1; ms <= 1000; ms++) {
                tracker.record(ms * 1_000_000L);
            }
        }
        now[0] += Duration.ofSeconds(2).toNanos();
        double p = 0.9;
        PercentileDelay feedback = DelayPolicy.percentile(p)
                .scope(PercentileDelay.Scope.CLUSTER)
                .budgetFeedback(true)
                .build();
        PercentileDelay plain =
                DelayPolicy.percentile(p).scope(PercentileDelay.Scope.CLUSTER).build();
        assertThat(delayAt(feedback, tracker, 1.0)).isEqualTo(tracker.percentileNanos(p));
        assertThat(delayAt(feedback, tracker, below[0])).isEqualTo(tracker.percentileNanos(p));
        for (int i = 0; i < 3; i++) {
            double fill = Math.nextDown(below[i]);
            long expected = tracker.percentileNanos(1 - (1 - p) * k[i]);
            assertThat(delayAt(feedback, tracker, fill)).as("fill %s", fill).isEqualTo(expected);
            assertThat(delayAt(plain, tracker, fill)).isEqualTo(tracker.percentileNanos(p));
        }
        assertThat(tracker.percentileNanos(1 - (1 - p) * k[2]))
                .isGreaterThan(tracker.percentileNanos(1 - (1 - p) * k[0]));
        assertThat(delayAt(feedback, tracker, 0)).isEqualTo(tracker.percentileNanos(1 - (1 - p) * k[2]));
    }

    private static long delayAt(PercentileDelay policy, LatencyTracker tracker, double fill) {
        return policy.delayNanos(FixedBudgetContext.withFill(tracker, fill));
    }

    @Test
    void should_let_the_last_call_win_when_max_extra_load_and_delay_or_budget_ratio_are_both_set() {
        DelayPolicy fixed = DelayPolicy.fixed(Duration.ofMillis(7));
        HedgeConfig delayLast =
                HedgeConfig.builder().maxExtraLoad(0.1).delay(fixed).build();
        assertThat(delayLast.delayPolicy()).isSameAs(fixed);
        assertThat(delayLast.budgetRatio()).isEqualTo(0.1);
        HedgeConfig knobLast = HedgeConfig.builder()
                .delay(fixed)
                .budgetRatio(0.2)
                .maxExtraLoad(0.1)
                .build();
        assertThat(((PercentileDelay) knobLast.delayPolicy()).percentile()).isEqualTo(1 - 0.1);
        assertThat(knobLast.budgetRatio()).isEqualTo(0.1);
        assertThat(HedgeConfig.builder()
                        .maxExtraLoad(0.1)
                        .budgetRatio(0.2)
                        .build()
                        .budgetRatio())
                .isEqualTo(0.2);
        assertThatThrownBy(() -> HedgeConfig.builder().maxExtraLoad(1e-17))
                .hasMessage("percentile must be in (0, 1), was 1");
    }

    /** The first backtick-quoted token of a default cell, else the cell itself. */
    static String defaultText(String cell) {
        if (cell.startsWith("`")) {
            return cell.substring(1, cell.indexOf('`', 1));
        }
        if (cell.startsWith("none") || cell.startsWith("required")) {
            return cell.split("[ (;]")[0];
        }
        return cell;
    }

    static Object parse(Kind kind, String text) {
        switch (kind) {
            case INT:
                return Integer.parseInt(text);
            case LONG:
                return Long.parseLong(text);
            case DOUBLE:
                return Double.parseDouble(text);
            case BOOLEAN:
                return Boolean.parseBoolean(text);
            case DURATION:
                return duration(text);
            default:
                throw new AssertionError("cannot parse a " + kind + " default: " + text);
        }
    }

    private static final Map<String, Function<Long, Duration>> UNITS = Map.of(
            "ns", Duration::ofNanos,
            "ms", Duration::ofMillis,
            "s", Duration::ofSeconds,
            "min", Duration::ofMinutes,
            "h", Duration::ofHours,
            "d", Duration::ofDays);

    static Duration duration(String text) {
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        String[] parts = text.split(" ");
        assertThat(parts).as("a duration is 'N unit': %s", text).hasSize(2);
        Function<Long, Duration> unit = UNITS.get(parts[1]);
        assertThat(unit).as("unit of %s", text).isNotNull();
        return unit.apply(Long.parseLong(parts[0]));
    }

    private static final Pattern INTERVAL = Pattern.compile("([\\[(])(.+), (.+)([\\])])");
    private static final Pattern BOUND = Pattern.compile("(>=|>) (\\S+?)(, finite)?");

    /** Values at the edges of a documented range (valid) and just outside it (invalid). */
    static List<Object[]> probes(Kind kind, String range) {
        List<Object[]> p = new ArrayList<>();
        switch (range) {
            case "—":
                return p;
            case "not null":
                p.add(new Object[] {null, false});
                return p;
            case "not null, no null element":
                p.add(new Object[] {null, false});
                p.add(new Object[] {"[null]", false}); // apply turns a non-null value into [null]
                return p;
            case "not blank":
                p.add(new Object[] {null, false});
                p.add(new Object[] {"", false});
                p.add(new Object[] {"  ", false});
                p.add(new Object[] {"getUser", true});
                return p;
            default:
                break;
        }
        Matcher interval = INTERVAL.matcher(range);
        Matcher bound = BOUND.matcher(range);
        if (interval.matches()) {
            edge(p, kind, interval.group(2), interval.group(1).equals("["), true);
            edge(p, kind, interval.group(3), interval.group(4).equals("]"), false);
        } else if (bound.matches()) {
            edge(p, kind, bound.group(2), bound.group(1).equals(">="), true);
            if (kind == Kind.DOUBLE) {
                p.add(new Object[] {Double.POSITIVE_INFINITY, bound.group(3) == null});
            }
        } else {
            throw new AssertionError("cannot read the range " + range);
        }
        if (kind == Kind.DOUBLE) {
            p.add(new Object[] {Double.NaN, false});
        }
        return p;
    }

    private static void edge(List<Object[]> p, Kind kind, String text, boolean closed, boolean lower) {
        int outward = lower ? -1 : 1;
        switch (kind) {
            case INT: {
                int v = Integer.parseInt(text);
                p.add(new Object[] {closed ? v : v - outward, true});
                p.add(new Object[] {closed ? v + outward : v, false});
                break;
            }
            case LONG: {
                long v = Long.parseLong(text);
                p.add(new Object[] {closed ? v : v - outward, true});
                p.add(new Object[] {closed ? v + outward : v, false});
                break;
            }
            case DOUBLE: {
                double v = Double.parseDouble(text);
                double out = lower ? Math.nextDown(v) : Math.nextUp(v);
                // an open bound is approached to 1e-9, the budget's resolution (maxExtraLoad = 1e-17
                // would make its percentile 1 - 1e-17 = 1.0, refused as a percentile)
                double in = lower ? v + 1e-9 : v - 1e-9;
                p.add(new Object[] {closed ? v : in, true});
                p.add(new Object[] {closed ? out : v, false});
                break;
            }
            case DURATION: {
                Duration v = duration(text);
                Duration out = v.plusNanos(outward);
                Duration in = v.minusNanos(outward);
                p.add(new Object[] {closed ? v : in, true});
                p.add(new Object[] {closed ? out : v, false});
                break;
            }
            default:
                throw new AssertionError("no numeric range for a " + kind);
        }
    }

    @Test
    void should_read_the_range_notation_when_probes_are_derived() {
        assertThat(probes(Kind.INT, "[1, 16]").stream().map(Arrays::toString))
                .containsExactly("[1, true]", "[0, false]", "[16, true]", "[17, false]");
        assertThat(probes(Kind.DURATION, "(0, 365 d]").stream().map(Arrays::toString))
                .containsExactly(
                        "[PT0.000000001S, true]", "[PT0S, false]", "[PT8760H, true]", "[PT8760H0.000000001S, false]");
        assertThat(defaultText("none (the executor's `deadline`)")).isEqualTo("none");
        assertThat(defaultText("`false` (`maxExtraLoad` turns it on)")).isEqualTo("false");
    }
}

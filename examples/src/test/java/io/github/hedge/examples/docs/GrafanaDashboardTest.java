package io.github.hedge.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.micrometer.HedgeMetrics;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/grafana/hedge-dashboard.json queries only what a real registry exposes: every metric and
 * label its PromQL names appears in a Prometheus scrape of hedge's meters after real calls.
 */
class GrafanaDashboardTest {
    private static final Path DASHBOARD = Path.of("..", "docs", "grafana", "hedge-dashboard.json");
    /** The operating page, whose dashboard and alert queries users copy. */
    private static final Path OPERATING = Path.of("..", "docs", "tuning.md");

    private static final Pattern CODE = Pattern.compile("(?s)```.*?```|`[^`\\n]+`");
    /** A JSON string field holding a query: "expr" of a panel target, "query"/"definition" of a variable. */
    private static final Pattern QUERY = Pattern.compile("\"(?:expr|definition)\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    /** A metric and its own selector, if any: {@code hedge_calls_total{name=~"$instance"}}. */
    private static final Pattern METRIC = Pattern.compile("\\b(hedge_[a-z0-9_]+)\\b(\\{[^}]*\\})?");

    private static final Pattern BY = Pattern.compile("\\bby \\(([^)]*)\\)");
    private static final Pattern MATCHER = Pattern.compile("([a-z_]+)\\s*=~?\\s*\"");
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\([a-z_]+,\\s*([a-z_]+)\\)");

    /** @return the scrape of one executor's meters after hedged, won, denied and unhedged calls */
    static String scrapeAfterRealCalls() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor executor = HedgedExecutor.of(
                "users",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.builder()
                                .ratio(0.1)
                                .initialTokens(2)
                                .ticker(time)
                                .build())
                        .build());
        try (HedgeMetrics metrics = HedgeMetrics.of(executor)) {
            metrics.bindTo(registry);
            for (int i = 0; i < 20; i++) {
                // the primary hangs; after 10 ms a hedge goes out while the budget has tokens, and wins
                List<CompletableFuture<String>> attempts = new ArrayList<>();
                CompletableFuture<String> call = executor.executeAsync(ctx -> {
                    CompletableFuture<String> f = new CompletableFuture<>();
                    attempts.add(f);
                    return f;
                });
                time.advance(Duration.ofMillis(10));
                attempts.get(attempts.size() - 1).complete("user");
                call.join();
            }
            executor.executeAsync(
                            CallOptions.builder().idempotent(false).build(),
                            ctx -> CompletableFuture.completedFuture("written"))
                    .join();
            assertThat(executor.stats().hedgesWon()).isPositive();
            assertThat(executor.stats().hedgesSent()).isLessThan(20); // the budget denied some
            return registry.scrape();
        }
    }

    @Test
    void should_query_only_metrics_and_labels_a_real_registry_exposes_when_hedged_calls_ran() throws Exception {
        String dashboard = Files.readString(DASHBOARD, StandardCharsets.UTF_8);
        String scrape = scrapeAfterRealCalls();
        List<String> lines = scrape.lines().filter(l -> !l.startsWith("#")).toList();

        List<String> queries = new ArrayList<>();
        Matcher q = QUERY.matcher(dashboard);
        while (q.find()) {
            queries.add(q.group(1).replace("\\\"", "\""));
        }
        assertThat(queries).as("queries in the dashboard").hasSizeGreaterThan(10);
        Set<String> checked = new LinkedHashSet<>();
        for (String query : queries) {
            // labels the query groups by apply to every metric in it
            Set<String> grouped = new LinkedHashSet<>();
            Matcher by = BY.matcher(query);
            while (by.find()) {
                for (String l : by.group(1).split(",")) {
                    grouped.add(l.trim());
                }
            }
            Matcher lv = LABEL_VALUES.matcher(query);
            while (lv.find()) {
                grouped.add(lv.group(1));
            }
            Matcher metric = METRIC.matcher(query);
            assertThat(metric.find()).as("a hedge metric in %s", query).isTrue();
            metric.reset();
            while (metric.find()) {
                String name = metric.group(1);
                // labels a metric's own selector matches on
                Set<String> labels = new LinkedHashSet<>(grouped);
                if (metric.group(2) != null) {
                    Matcher m = MATCHER.matcher(metric.group(2));
                    while (m.find()) {
                        labels.add(m.group(1));
                    }
                }
                List<String> samples = lines.stream()
                        .filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
                        .toList();
                assertThat(samples)
                        .as("samples of %s (in the query %s)", name, query)
                        .isNotEmpty();
                for (String label : labels) {
                    assertThat(samples)
                            .as("label %s on %s (in the query %s)", label, name, query)
                            .anyMatch(s -> s.contains("{" + label + "=\"") || s.contains("," + label + "=\""));
                }
                checked.add(name);
            }
        }
        // the panels the dashboard promises
        assertThat(checked)
                .contains(
                        "hedge_calls_total",
                        "hedge_hedges_sent_hedges_total",
                        "hedge_hedges_won_hedges_total",
                        "hedge_budget_denied_hedges_total",
                        "hedge_delay_current_seconds",
                        "hedge_budget_remaining_tokens",
                        "hedge_latency_hedged_seconds",
                        "hedge_latency_unhedged_estimated_seconds");
    }

    @Test
    void should_name_only_metrics_and_labels_a_real_registry_exposes_when_the_operating_page_queries_them()
            throws Exception {
        String page = Files.readString(OPERATING, StandardCharsets.UTF_8);
        List<String> lines =
                scrapeAfterRealCalls().lines().filter(l -> !l.startsWith("#")).toList();
        Set<String> checked = new LinkedHashSet<>();
        Matcher code = CODE.matcher(page);
        while (code.find()) {
            Matcher metric = METRIC.matcher(code.group());
            while (metric.find()) {
                String name = metric.group(1);
                List<String> samples = lines.stream()
                        .filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
                        .toList();
                assertThat(samples)
                        .as("samples of %s, named in docs/tuning.md", name)
                        .isNotEmpty();
                if (metric.group(2) != null) {
                    Matcher m = MATCHER.matcher(metric.group(2));
                    while (m.find()) {
                        String label = m.group(1);
                        assertThat(samples)
                                .as("label %s on %s, named in docs/tuning.md", label, name)
                                .anyMatch(x -> x.contains("{" + label + "=\"") || x.contains("," + label + "=\""));
                    }
                }
                checked.add(name);
            }
        }
        assertThat(checked)
                .as("the queries of docs/tuning.md")
                .contains("hedge_budget_denied_hedges_total", "hedge_latency_unhedged_supported");
    }
}

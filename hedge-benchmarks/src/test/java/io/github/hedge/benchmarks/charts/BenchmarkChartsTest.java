package io.github.hedge.benchmarks.charts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The charts of docs/benchmarks.md are what their raw results say: each committed SVG equals its
 * rendering from the committed raw file, and docs/benchmarks.md embeds each one next to a link to
 * that raw file. Regenerate the charts with {@code -Dhedge.docs.update=true}.
 */
class BenchmarkChartsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void should_match_the_committed_charts_when_rendered_from_the_committed_raw_results() throws IOException {
        Map<String, String> charts = BenchmarkCharts.render(ROOT);
        boolean update = Boolean.getBoolean("hedge.docs.update");
        List<String> stale = new ArrayList<>();
        for (Map.Entry<String, String> chart : charts.entrySet()) {
            Path file = ROOT.resolve(chart.getKey());
            if (update) {
                Files.createDirectories(file.getParent());
                Files.writeString(file, chart.getValue(), StandardCharsets.UTF_8);
            }
            String committed = Files.isRegularFile(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
            if (!committed.equals(chart.getValue())) {
                stale.add(chart.getKey());
            }
        }
        assertThat(stale)
                .as("charts stale against hedge-benchmarks/results; regenerate with -Dhedge.docs.update=true")
                .isEmpty();
    }

    @Test
    void should_embed_every_chart_in_a_section_that_links_its_raw_files_when_benchmarks_md_is_read()
            throws IOException {
        String page = Files.readString(ROOT.resolve("docs/benchmarks.md"), StandardCharsets.UTF_8);
        Map<String, List<String>> raws = Map.of(
                BenchmarkCharts.SWEEP_CHART, List.of(BenchmarkCharts.SWEEP_RAW),
                BenchmarkCharts.TRANSIENT_CHART, List.of(BenchmarkCharts.TRANSIENT_RAW),
                BenchmarkCharts.SHIFT_CHART, BenchmarkCharts.SHIFT_RAWS);
        for (Map.Entry<String, List<String>> chart : raws.entrySet()) {
            int at = page.indexOf("(" + chart.getKey().substring("docs/".length()) + ")");
            assertThat(at).as("docs/benchmarks.md embeds %s", chart.getKey()).isNotNegative();
            int start = page.lastIndexOf("\n#", at);
            int end = page.indexOf("\n#", at);
            String section = page.substring(start < 0 ? 0 : start, end < 0 ? page.length() : end);
            for (String raw : chart.getValue()) {
                assertThat(section)
                        .as("the section embedding %s links %s", chart.getKey(), raw)
                        .contains("(../" + raw + ")");
            }
        }
    }

    @Test
    void should_draw_one_line_per_shift_run_when_the_shift_chart_is_rendered() {
        String run = "{\"scenario\":\"shift\",\"budget\":0.05,\"healthy_p95_ms\":5.0,\"slow_factor\":10.0,"
                + "\"slow_from_s\":30.0,\"slow_to_s\":90.0,"
                + "\"extra_load_per_second\":[{\"t_s\":1.0,\"extra_load\":0.05},{\"t_s\":2.0,\"extra_load\":0.15}],"
                + "\"delay_over_time\":[{\"t_s\":5.0,\"delay_ms\":5.0}]}\n";
        String chart =
                BenchmarkCharts.shiftChart(List.of(run, run.replace("\"slow_factor\":10.0", "\"slow_factor\":5.0")));
        assertThat(chart.split("<polyline", -1)).hasSize(5);
        assertThat(chart)
                .contains("10x slower, budget 5%")
                .contains("5x slower, budget 5%")
                .contains(">3.0</text>");
    }

    @Test
    void should_give_the_same_bytes_when_rendered_twice_and_other_bytes_when_a_raw_figure_changes() {
        String sweep = cell("lognormal:0,1", 0.05, 10.5, 10.0) + cell("pareto:2,1", 0.05, 8.0, 8.0);
        String chart = BenchmarkCharts.sweepChart(sweep);
        assertThat(BenchmarkCharts.sweepChart(sweep)).isEqualTo(chart);
        assertThat(chart)
                .startsWith("<svg ")
                .endsWith("</svg>\n")
                .contains("lognormal:0,1, budget 5%: p99.9 1.0500x")
                .contains("pareto:2,1, budget 5%: p99.99 1.0000x");
        assertThat(BenchmarkCharts.sweepChart(
                        cell("lognormal:0,1", 0.05, 10.6, 10.0) + cell("pareto:2,1", 0.05, 8.0, 8.0)))
                .isNotEqualTo(chart)
                .contains("lognormal:0,1, budget 5%: p99.9 1.0600x");
    }

    @Test
    void should_colour_a_cold_start_cell_by_its_ratio_when_the_grid_is_drawn() {
        String grid = transientCell("lognormal:0,1", 10, 200, 1.05, 1.08)
                + transientCell("lognormal:0,2", 10, 200, 1.2, 3.18);
        String chart = BenchmarkCharts.transientChart(grid);
        assertThat(chart)
                .contains("lognormal:0,1, 10 calls/s, first 200 calls: p99.9 1.0800x")
                .contains("lognormal:0,2, 10 calls/s, first 200 calls: p99.9 3.1800x")
                .contains(">3.18<")
                .contains("(1 of 2 cells pass both)");
    }

    @Test
    void should_fail_with_the_column_when_a_raw_line_is_not_json() {
        assertThatThrownBy(() -> BenchmarkCharts.sweepChart("{\"scenario\":\"sweep\",\"dist\":}\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("column 28");
    }

    private static String cell(String dist, double budget, double hedgedP999, double oracleP999) {
        return "{\"scenario\":\"sweep\",\"dist\":\"" + dist + "\",\"budget\":" + budget
                + ",\"hedged\":{\"p99\":5.0,\"p999\":" + hedgedP999 + ",\"p9999\":20.0}"
                + ",\"oracle\":{\"p99\":5.0,\"p999\":" + oracleP999 + ",\"p9999\":20.0}}\n";
    }

    private static String transientCell(String dist, double rate, int calls, double p99, double p999) {
        return "{\"scenario\":\"transient\",\"service\":\"" + dist + "\",\"dist\":\"" + dist + "\",\"rate\":" + rate
                + ",\"calls\":" + calls + ",\"hedged_p99_over_fixed\":" + p99 + ",\"hedged_p999_over_fixed\":" + p999
                + "}\n";
    }
}

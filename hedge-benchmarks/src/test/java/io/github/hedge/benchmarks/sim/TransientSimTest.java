package io.github.hedge.benchmarks.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code transient} command on one tiny cell: a few seeds, the first 200 calls. */
class TransientSimTest {
    private static final String NUM = "-?[0-9]+(\\.[0-9]+)?(E-?[0-9]+)?";

    @Test
    void the_hindsight_fixed_delay_matches_the_hedged_extra_load_on_the_same_draws() {
        TransientSim.Service stall =
                TransientSim.Service.stalling(Distribution.parse(TransientSim.DEFAULT_STALL_BASE), 0.10, 40, 250);
        TransientSim.Cell c = TransientSim.runCell(stall, 200, 100, 0.05, 4, 1);

        assertThat(c.hedgedCounts.calls).isEqualTo(800);
        assertThat(c.fixedCounts.calls).isEqualTo(800);
        assertThat(c.hedged.count()).isEqualTo(800);
        assertThat(c.fixed.count()).isEqualTo(800);
        assertThat(c.hedgedCounts.extraLoad()).isGreaterThan(0);
        // fixed(d) with no budget hedges exactly the primaries above d: same hedges, to one call
        assertThat(c.fixedCounts.extraLoad()).isCloseTo(c.hedgedCounts.extraLoad(), within(1.0 / 800 + 1e-9));
        assertThat(c.fixedCounts.extraLoad()).isCloseTo(c.fixedPredictedLoad, within(1e-12));
        // both hedge the stalls away: their p99 is far below the unhedged one (stalls of 40+ ms)
        assertThat(c.hedged.at(0.99)).isLessThan(c.unhedged.at(0.99));
        assertThat(c.fixed.at(0.99)).isLessThan(c.unhedged.at(0.99));
        assertThat(c.fixedDelayNanos).isPositive();
    }

    @Test
    void the_command_prints_a_table_and_writes_one_json_line_per_cell_and_a_summary(@TempDir Path dir)
            throws Exception {
        Path json = dir.resolve("transient.jsonl");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HedgeSim.run(
                new String[] {
                    "transient",
                    "--dists",
                    "lognormal:0,1",
                    "--calls",
                    "200",
                    "--rates",
                    "1000",
                    "--seeds",
                    "3",
                    "--json",
                    json.toString()
                },
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();

        List<String> table = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(table.get(1)).startsWith("service");
        // the stalling third replica first, then the distribution
        assertThat(table.get(2))
                .startsWith("stall3:0.1,40,250+lognormal:0.693147,0.5")
                .containsPattern("PASS|MISS");
        assertThat(table.get(3)).startsWith("lognormal:0,1").containsPattern("PASS|MISS");
        assertThat(table.get(4)).startsWith("summary:").contains("of 2 cells PASS");

        List<String> lines = Files.readAllLines(json);
        assertThat(lines).hasSize(3);
        for (String cell : lines.subList(0, 2)) {
            assertThat(cell).startsWith("{\"scenario\":\"transient\"").endsWith("}");
            assertThat(cell).contains("\"calls\":200,", "\"rate\":1000.0,", "\"seeds\":3,");
            for (String variant : new String[] {"unhedged", "hedged", "hindsight_fixed"}) {
                assertThat(Pattern.compile("\"" + variant + "\":\\{\"p50\":" + NUM + ",\"p90\":" + NUM + ",\"p99\":"
                                        + NUM + ",\"p999\":" + NUM)
                                .matcher(cell)
                                .find())
                        .as(variant + " in " + cell)
                        .isTrue();
            }
            double hedgedLoad = number(cell, "\"hedged\":\\{[^}]*\"extra_load\":(" + NUM + ")");
            double fixedLoad = number(cell, "\"hindsight_fixed\":\\{[^}]*\"extra_load\":(" + NUM + ")");
            assertThat(fixedLoad).isCloseTo(hedgedLoad, within(1.0 / 600 + 1e-5));
            double p99 = number(cell, "\"hedged_p99_over_fixed\":(" + NUM + ")");
            double p999 = number(cell, "\"hedged_p999_over_fixed\":(" + NUM + ")");
            assertThat(cell)
                    .contains("\"pass\":" + (p99 <= TransientSim.TARGET && p999 <= TransientSim.TARGET))
                    .contains("\"hedged_above_fixed_p999\":{\"threshold_ms\":")
                    .contains("\"early_calls\":1600,");
        }
        assertThat(lines.get(2)).startsWith("{\"scenario\":\"transient-summary\",\"cells\":2,");
    }

    @Test
    void the_hindsight_delay_splits_no_tie_and_rounds_to_the_larger_load() {
        long[] sorted = {1, 1, 1, 5, 5, 9};
        assertThat(TransientSim.achievableHedges(sorted, 0)).isZero();
        assertThat(TransientSim.delayForHedges(sorted, 0)).isEqualTo(10);
        assertThat(TransientSim.achievableHedges(sorted, 1)).isEqualTo(1);
        assertThat(TransientSim.delayForHedges(sorted, 1)).isEqualTo(7);
        // two primaries above d is impossible (the 5s tie): one or three, equally near, takes three
        assertThat(TransientSim.achievableHedges(sorted, 2)).isEqualTo(3);
        assertThat(TransientSim.delayForHedges(sorted, 3)).isEqualTo(3);
        assertThat(TransientSim.achievableHedges(sorted, 5)).isEqualTo(6);
        assertThat(TransientSim.delayForHedges(sorted, 6)).isZero();
    }

    private static double number(String json, String regex) {
        Matcher m = Pattern.compile(regex).matcher(json);
        assertThat(m.find()).as(regex + " in " + json).isTrue();
        return Double.parseDouble(m.group(1));
    }
}

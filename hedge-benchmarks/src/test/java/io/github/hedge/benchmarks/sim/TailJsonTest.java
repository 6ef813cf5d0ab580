package io.github.hedge.benchmarks.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command contract of {@code tail --json}: stdout holds exactly one JSON object. */
class TailJsonTest {
    private static final String NUM = "-?[0-9]+(\\.[0-9]+)?(E-?[0-9]+)?";

    @Test
    void tailPrintsOneObjectWithOneMemberPerVariant(@TempDir Path dir) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Path png = dir.resolve("plot.png");
        int code = HedgeSim.run(
                new String[] {
                    "tail",
                    "--dist",
                    "lognormal:0,1",
                    "--budget",
                    "0.05",
                    "--requests",
                    "3000",
                    "--seed",
                    "1",
                    "--json",
                    "--plot",
                    png.toString()
                },
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        String stdout = out.toString(StandardCharsets.UTF_8);
        assertThat(stdout.lines()).hasSize(1);
        String json = stdout.trim();
        assertThat(json).startsWith("{\"unhedged\":{").endsWith("}");
        for (String variant : new String[] {"unhedged", "hedged", "fixed", "oracle"}) {
            Pattern p = Pattern.compile("\"" + variant + "\":\\{\"p50\":" + NUM + ",\"p90\":" + NUM + ",\"p99\":" + NUM
                    + ",\"p999\":" + NUM);
            assertThat(p.matcher(json).find()).as(variant + " in " + json).isTrue();
        }
        assertThat(Pattern.compile("\"hedged\":\\{[^}]*\"extra_load\":" + NUM)
                        .matcher(json)
                        .find())
                .isTrue();
        assertThat(Pattern.compile("\"fixed\":\\{[^}]*\"extra_load\":" + NUM)
                        .matcher(json)
                        .find())
                .isTrue();
        assertThat(Files.exists(png)).isTrue();
    }

    @Test
    void should_run_the_delay_scope_asked_for_and_report_how_the_delay_spread_when_given_a_scope() {
        Distribution d = Distribution.parse("lognormal:0,1");
        TailSim.Config median = new TailSim.Config(d, 0.05, 20_000, 1, 1000, 0, PercentileDelay.Scope.TARGET_MEDIAN);
        TailSim.Result byDefault = TailSim.run(new TailSim.Config(d, 0.05, 20_000, 1, 1000));
        TailSim.Result consensus =
                TailSim.run(new TailSim.Config(d, 0.05, 20_000, 1, 1000, 0, PercentileDelay.Scope.TARGET_CONSENSUS));
        TailSim.Result byMedian = TailSim.run(median);

        assertThat(consensus.delayLogSd).isEqualTo(byDefault.delayLogSd); // the default scope
        assertThat(byMedian.delayLogSd).isPositive().isNotEqualTo(consensus.delayLogSd);
        assertThat(consensus.delayLogMean).isCloseTo(0, offset(0.1)); // the delay is about d*
        assertThat(TailSim.json(byMedian, median)).contains("\"delay_log_sd\":");
    }

    @Test
    void should_name_the_scopes_when_the_scope_option_is_not_one() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HedgeSim.run(
                new String[] {"sweep", "--scope", "NEAREST"},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isNotZero();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(
                        "--scope must be one of [CLUSTER, TARGET_MEDIAN, TARGET_CONSENSUS, PREVIOUS_TARGET], was 'NEAREST'");
    }

    /** The same pareto:2,1 draws at b = 0.05, run cancelling every loser and sampling every one. */
    private record LoserRuns(TailSim.Config sampledConfig, TailSim.Result cancelled, TailSim.Result sampled) {
        static LoserRuns of(int requests) {
            Distribution d = Distribution.parse("pareto:2,1");
            TailSim.Config all = new TailSim.Config(d, 0.05, requests, 1, 1000, 1.0);
            return new LoserRuns(all, TailSim.run(new TailSim.Config(d, 0.05, requests, 1, 1000)), TailSim.run(all));
        }
    }

    @Test
    void should_observe_more_primaries_to_the_end_when_losers_are_sampled() {
        LoserRuns runs = LoserRuns.of(5000);
        TailSim.Result cancelled = runs.cancelled();
        TailSim.Result sampled = runs.sampled();
        // the same draws, the same calls: only what the estimate sees of the beaten primaries differs
        assertThat(cancelled.censoredPrimaries).isGreaterThan(50);
        assertThat(sampled.censoredPrimaries).isLessThan(cancelled.censoredPrimaries / 10);
        assertThat(TailSim.json(sampled, runs.sampledConfig()))
                .contains("\"censored_primaries\":" + sampled.censoredPrimaries);
    }

    @Test
    void should_charge_the_servers_for_beaten_primaries_left_running_when_losers_are_sampled() {
        LoserRuns runs = LoserRuns.of(20000);
        TailSim.Result cancelled = runs.cancelled();
        TailSim.Result sampled = runs.sampled();
        // cancelling a beaten primary stops its work; leaving it running does not
        assertThat(sampled.hedgedAttemptTime).isGreaterThan(cancelled.hedgedAttemptTime);
        // a hedge adds work, never more than one more attempt per call
        assertThat(cancelled.hedgedAttemptTime).isBetween(0.5, 2.0);
        assertThat(cancelled.oracleAttemptTime).isBetween(0.5, 2.0);
        // the fixed variant cancels every loser in both runs and sees the same draws
        assertThat(sampled.fixedAttemptTime).isEqualTo(cancelled.fixedAttemptTime);
        assertThat(TailSim.json(sampled, runs.sampledConfig())).contains("\"attempt_time_over_unhedged\":");
    }

    @Test
    void should_add_the_whole_latency_of_answered_attempts_and_the_elapsed_time_of_cancelled_ones() {
        Workload w = new Workload(Distribution.parse("lognormal:0,1"), 1, 1000, 2, 1);
        double x1 = w.latencyMs(1, 0);
        double x2 = w.latencyMs(2, 0);

        // never hedged: the primary's latency (within the clock's nanosecond rounding)
        assertThat(attemptTimeMs(w, DelayPolicy.fixed(Duration.ofDays(1)))).isCloseTo(x1, offset(1e-5));

        // hedged at d: the winner's whole latency plus the loser's time until the winner answered
        double d = x1 / 2;
        double expected = x1 < d + x2 ? x1 + (x1 - d) : (d + x2) + x2;
        assertThat(attemptTimeMs(w, DelayPolicy.fixed(Duration.ofNanos(Workload.nanos(d)))))
                .isCloseTo(expected, offset(1e-5));
    }

    private static double attemptTimeMs(Workload w, DelayPolicy delay) {
        ExecutorRun.AttemptTime time = new ExecutorRun.AttemptTime();
        ExecutorRun.run(
                "attempt-time",
                HedgeConfig.builder().delay(delay).budgetRatio(1.0),
                w,
                ExecutorRun.delayed(w, ExecutorRun.Slowdown.NONE, time),
                new VirtualTimeScheduler(),
                null);
        return time.ms();
    }

    @Test
    void jsonWriterEscapesAndNests() {
        String s = new Json()
                .beginObject()
                .field("a", 1.5)
                .field("b", "x\"y\n")
                .beginObject("c")
                .field("d", 3L)
                .field("e", Double.NaN)
                .endObject()
                .beginArray("f")
                .value(2.0)
                .value(0.25)
                .endArray()
                .endObject()
                .toString();
        assertThat(s).isEqualTo("{\"a\":1.5,\"b\":\"x\\\"y\\n\",\"c\":{\"d\":3,\"e\":null},\"f\":[2.0,0.25]}");
    }
}

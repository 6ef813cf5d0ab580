package io.github.hedge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.HedgeBudget;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the README's demo for a few seconds (real grpc servers on 127.0.0.1, real channels) and checks
 * its table and its HTML report, which Debian's chromium renders headless. Timings are never asserted:
 * the machine may be loaded.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class HedgeDemoTest {
    @TempDir
    static Path dir;

    static HedgeDemo.Summary summary;
    static String console;
    static long fullCollections;

    @BeforeAll
    static void runShortDemo() throws Exception {
        long fullBefore = fullCollections();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            summary = HedgeDemo.run(
                    new String[] {
                        "--seconds",
                        "3",
                        "--rate",
                        "150",
                        "--warmup",
                        "0.5",
                        "--jvm-warmup",
                        "0.5",
                        "--no-progress",
                        "--report",
                        dir.resolve("report.html").toString()
                    },
                    out);
        }
        console = bytes.toString(StandardCharsets.UTF_8);
        fullCollections = fullCollections() - fullBefore;
    }

    /** @return full (old-generation) collections of this JVM so far; fails if its collector has no such bean */
    private static long fullCollections() {
        List<GarbageCollectorMXBean> old = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .filter(b -> b.getName().contains("Old") || b.getName().contains("MarkSweep"))
                .toList();
        assertThat(old).as("the JVM's full-collection bean").isNotEmpty();
        return old.stream()
                .mapToLong(GarbageCollectorMXBean::getCollectionCount)
                .sum();
    }

    @Test
    void should_print_one_row_per_mode_when_the_demo_runs_with_defaults() {
        assertThat(summary.phases())
                .extracting(PhaseResult::label)
                .containsExactly("no hedging", "hedge-grpc", "grpc native hedging");
        assertThat(console)
                .contains("p50", "p90", "p99", "p99.9", "max", "extra load", "hedges won")
                .contains("HTML report: " + summary.report());
        for (PhaseResult r : summary.phases()) {
            assertThat(r.calls()).as(r.label()).isGreaterThan(100);
            assertThat(r.successes()).as(r.label()).isGreaterThan(0);
            assertThat(console).contains(r.label());
        }
    }

    @Test
    void should_list_each_modes_slowest_calls_with_when_they_started_when_the_demo_ends() {
        assertThat(console).contains("5 slowest calls of each mode, and when each started");
        for (PhaseResult r : summary.phases()) {
            String line = console.lines()
                    .filter(l -> l.startsWith(r.label() + " ") && l.contains(" at "))
                    .findFirst()
                    .orElseThrow();
            String[] calls = line.substring(r.label().length()).trim().split(", ");
            assertThat(calls).as(line).hasSize(5);
            assertThat(calls[0]).as(line).startsWith(HtmlReport.ms(r.maxMillis()) + " at ");
            for (String c : calls) {
                double startedAt = Double.parseDouble(c.substring(c.indexOf(" at ") + 4, c.length() - 2));
                assertThat(startedAt).as(line).isBetween(0.0, r.seconds());
            }
        }
    }

    @Test
    void should_hedge_and_win_within_the_budget_with_both_hedging_modes_and_never_without_when_run() {
        PhaseResult none = summary.phases().get(0);
        PhaseResult hedge = summary.phases().get(1);
        PhaseResult nativeHedging = summary.phases().get(2);
        assertThat(none.attempts()).isEqualTo(none.calls());
        assertThat(none.hedgesWon()).isZero();
        // replica 3 stalls 10% of its calls for 40-250 ms: native hedging hedges them, and hedges
        // win. hedge-grpc hedges them too, or keeps primaries off replica 3 once the share of its
        // primaries that needed a hedge gives it away: either way no call of its phase is as slow
        // as a stall
        assertThat(nativeHedging.attempts()).as("native attempts").isGreaterThan(nativeHedging.calls());
        assertThat(nativeHedging.hedgesWon()).as("native hedges won").isPositive();
        assertThat(hedge.maxMillis()).as("hedge-grpc's slowest call").isLessThan(40);
        // the budget's promise: after P primaries, at most max(its 20 cold-start tokens, 5% of P)
        // hedges; P counts the phase's 0.5 s warm-up at 150 calls/s (75 calls) and its calls
        long primaries = 75 + hedge.calls();
        assertThat(hedge.attempts() - hedge.calls()).as("hedge-grpc's hedges").isLessThanOrEqualTo((long)
                Math.max(HedgeBudget.coldStartTokens(0.05), 0.05 * primaries));
        assertThat(hedge.hedgesWon()).isLessThanOrEqualTo(hedge.attempts() - hedge.calls());
        // every answer came from a request some replica received
        for (long n : summary.requestsPerReplica()) {
            assertThat(n).isGreaterThan(0);
        }
        assertThat(served())
                .isGreaterThanOrEqualTo(
                        measuredAttempts() - summary.phases().get(1).errors());
    }

    @Test
    void should_start_every_modes_phase_from_a_collected_heap_and_report_the_pauses_when_run() {
        // without it, the garbage of the JVM warm-up and of the modes before is collected in
        // whichever mode's measured window the young generation happens to fill
        assertThat(fullCollections)
                .as("full collections during the run")
                .isGreaterThanOrEqualTo(summary.phases().size());
        String line = console.lines()
                .filter(l -> l.startsWith("garbage-collection pauses while each mode's measured calls ran"))
                .findFirst()
                .orElseThrow();
        for (PhaseResult r : summary.phases()) {
            assertThat(line).contains(r.label() + (r.gcPauses() == 0 ? " none" : " " + r.gcPauses() + " ("));
        }
    }

    @Test
    void should_run_every_mode_unrecorded_on_its_own_channel_first_when_the_jvm_warms_up() {
        assertThat(console).contains("warming the JVM: each mode 0.5 s on a channel of its own, not recorded");
        // the replicas count every request: the measured calls' attempts, each mode's 0.5 s phase
        // warm-up, and the JVM warm-up's three modes of 0.5 s each at 150 calls/s (225 calls, more
        // with hedges), none of which is in a measured row
        long errors = summary.phases().stream().mapToLong(PhaseResult::errors).sum();
        long phaseWarmups = 3 * 75;
        long jvmWarmup = 3 * 75;
        assertThat(served()).isGreaterThanOrEqualTo(measuredAttempts() - errors + (phaseWarmups + jvmWarmup) * 9 / 10);
    }

    /** @return requests the replicas received over the whole run */
    private static long served() {
        return java.util.Arrays.stream(summary.requestsPerReplica()).sum();
    }

    /** @return attempts of the measured calls, every mode */
    private static long measuredAttempts() {
        return summary.phases().stream().mapToLong(PhaseResult::attempts).sum();
    }

    @Test
    void should_write_a_self_contained_report_when_the_demo_ends() throws Exception {
        String html = Files.readString(summary.report());
        assertThat(html).contains("<table id=\"summary\">", "new Chart(", "hedge-grpc", "grpc native hedging");
        // Chart.js is inlined: no script is fetched from anywhere
        assertThat(html).doesNotContain("<script src");
        assertThat(html).contains("Chart.js v" + HtmlReport.chartJsVersion());
    }

    @Test
    void should_draw_both_charts_when_chromium_renders_the_report() throws Exception {
        Chromium.assumeInstalled();
        Chromium.assertChartsDrawn(summary.report(), dir.resolve("chromium-profile"), 3);
    }

    @Test
    void should_drive_given_servers_when_grpc_addresses_are_passed() throws Exception {
        try (DemoBackends backends = DemoBackends.start(1, 0, 7)) {
            StringBuilder list = new StringBuilder();
            backends.addresses().forEach(a -> list.append(list.length() == 0 ? "" : ",")
                    .append("127.0.0.1:")
                    .append(a.getPort()));
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            HedgeDemo.Summary s;
            try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
                s = HedgeDemo.run(
                        new String[] {
                            "--grpc",
                            list.toString(),
                            "--method",
                            DemoService.METHOD,
                            "--modes",
                            "hedge",
                            "--seconds",
                            "1",
                            "--warmup",
                            "0",
                            "--jvm-warmup",
                            "0",
                            "--rate",
                            "100",
                            "--no-progress",
                            "--report",
                            dir.resolve("real.html").toString()
                        },
                        out);
            }
            assertThat(s.phases()).singleElement().satisfies(r -> assertThat(r.successes())
                    .isGreaterThan(50));
            assertThat(backends.received()).doesNotContain(0L);
            assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("3 gRPC servers");
        }
    }

    @Test
    void should_name_the_option_its_range_and_the_value_when_an_option_is_invalid() {
        assertThatThrownBy(() -> HedgeDemo.Options.parse(new String[] {"--rate", "0"}))
                .hasMessage("--rate must be in [1, 20000], was 0");
        assertThatThrownBy(() -> HedgeDemo.Options.parse(new String[] {"--modes", "none,fast"}))
                .hasMessage("--modes takes a list of none, hedge, native, was \"none,fast\"");
        assertThatThrownBy(() -> HedgeDemo.Options.parse(new String[] {"--grpc", "localhost"}))
                .hasMessageContaining("host:port");
        assertThatThrownBy(() -> HedgeDemo.Options.parse(new String[] {"--fast"}))
                .hasMessageContaining("unknown option --fast");
    }

    @Test
    void should_list_every_option_in_the_examples_readme_when_help_changes() throws Exception {
        // surefire runs in the module's directory, examples/
        String readme = Files.readString(Path.of("README.md"));
        String options = HedgeDemo.HELP.substring(HedgeDemo.HELP.indexOf("\n\n") + 2);
        assertThat(readme).contains(options);
    }
}

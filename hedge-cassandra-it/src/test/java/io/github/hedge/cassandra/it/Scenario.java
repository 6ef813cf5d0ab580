package io.github.hedge.cassandra.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What the fault classes share: the constant policy's delay, the report, the exactly-once checks. */
final class Scenario {
    private Scenario() {}

    static final long S = 1_000_000_000L;

    /**
     * @return the runs of the two hedging modes among {@code runs}, wrapped session first; a mode
     *     left out by {@link Mode#selected()} is absent
     */
    static Map<Mode, LoadRun> hedgingRuns(Map<Mode, LoadRun> runs) {
        Map<Mode, LoadRun> out = new LinkedHashMap<>();
        for (Mode mode : List.of(Mode.HEDGE_WRAPPED, Mode.HEDGE_POLICY)) {
            LoadRun run = runs.get(mode);
            if (run != null) {
                out.put(mode, run);
            }
        }
        return out;
    }

    /**
     * The constant policy's delay for the same extra load as hedge's default (5%): the p95 of the
     * unhedged run's idempotent requests before the fault.
     */
    static Duration sameExtraLoadDelay(LoadRun none, int fromS, int toS) {
        double p95 = LoadRun.percentileMs(
                none.window(fromS * S, toS * S, s -> s.kind().idempotent()), 0.95);
        return Duration.ofMillis(Math.max(1, (long) Math.ceil(p95)));
    }

    static String firstError(LoadRun run) {
        return run.samples.stream()
                .filter(s -> !s.ok())
                .map(s -> s.kind() + " at " + String.format("%.2f", s.start() / 1e9) + " s: " + s.error())
                .findFirst()
                .orElse("none");
    }

    static void report(
            String fault,
            String title,
            List<LoadRun> runs,
            int warmupS,
            int faultS,
            Map<Mode, Workload.Check> checks,
            Duration constantDelay) {
        report(fault, title, runs, warmupS, faultS, checks, constantDelay, null, null);
    }

    /** As above, with one more column: the target for this fault and whether the run met it. */
    static void report(
            String fault,
            String title,
            List<LoadRun> runs,
            int warmupS,
            int faultS,
            Map<Mode, Workload.Check> checks,
            Duration constantDelay,
            String targetHeader,
            java.util.function.Function<LoadRun, String> target) {
        List<String> rows = new ArrayList<>();
        rows.add("| mode | requests | failed (idempotent) | failed (counter, LWT) | steady req/s | lowest req/s"
                + " after the fault | steady p99 ms | p99 ms, fault +0-5 s | max ms after the fault"
                + " | extra executions | node marked down after | acked writes read back"
                + " | counter = acked (+ failed) |" + (target == null ? "" : " " + targetHeader + " |"));
        rows.add("|---|---|---|---|---|---|---|---|---|---|---|---|---|" + (target == null ? "" : "---|"));
        for (LoadRun r : runs) {
            long at = r.events.containsKey("fault") ? r.at("fault") : faultS * S;
            int[] t = r.throughputPerSecond();
            int from = (int) (at / S);
            int lowest =
                    Arrays.stream(Arrays.copyOfRange(t, from, t.length)).min().orElse(0);
            Workload.Check c = checks == null ? null : checks.get(r.mode);
            rows.add("| " + r.mode.label
                    + " | " + r.samples.size()
                    + " | " + r.failures(s -> s.kind().idempotent())
                    + " | " + r.failures(s -> !s.kind().idempotent())
                    + " | " + Report.f(r.steadyRate(warmupS, faultS))
                    + " | " + lowest
                    + " | "
                    + Report.f(LoadRun.percentileMs(
                            r.window(warmupS * S, at, s -> s.kind().idempotent()), 0.99))
                    + " | "
                    + Report.f(LoadRun.percentileMs(
                            r.window(at, at + 5 * S, s -> s.kind().idempotent()), 0.99))
                    + " | "
                    + Report.f(LoadRun.maxMs(
                            r.window(at, Long.MAX_VALUE, s -> s.kind().idempotent())))
                    + " | " + String.format("%.1f%%", 100 * r.extraLoad())
                    + " | " + (r.markedDownAt < 0 ? "-" : String.format("%.2f s", (r.markedDownAt - at) / 1e9))
                    + " | " + (c == null ? "-" : (c.acked() - c.missingInserts().size()) + "/" + c.acked())
                    + " | " + (c == null ? "-" : c.counter() + " = " + c.countAcked() + " (+" + c.countFailed() + ")")
                    + " |" + (target == null ? "" : " " + target.apply(r) + " |"));
        }
        String header = "Constant policy delay: " + constantDelay.toMillis()
                + " ms (the unhedged run's p95 before the fault). Rate " + LoadRun.RATE + " req/s from "
                + LoadRun.THREADS + " threads.\n";
        Report.write(fault, title, runs, rows, header);
    }

    static void assertNothingLost(Mode mode, Workload.Check c) {
        assertThat(c.missingInserts())
                .as("%s: acknowledged inserts not found at ALL", mode)
                .isEmpty();
        assertThat(c.missingLwts())
                .as("%s: applied IF NOT EXISTS inserts not found", mode)
                .isEmpty();
    }

    static void assertExactlyOnce(Mode mode, Workload.Check c) {
        // an acknowledged increment was applied once; a failed one may or may not have been
        // (CQL cannot say), but none was applied twice
        assertThat(c.counter())
                .as(
                        "%s: counter total vs %d acknowledged and %d failed increments",
                        mode, c.countAcked(), c.countFailed())
                .isBetween(c.countAcked(), c.countAcked() + c.countFailed());
        // each conditional insert has its own key: "not applied" would mean it ran twice
        assertThat(c.lwtNotApplied())
                .as("%s: IF NOT EXISTS inserts that found their own row", mode)
                .isZero();
    }
}

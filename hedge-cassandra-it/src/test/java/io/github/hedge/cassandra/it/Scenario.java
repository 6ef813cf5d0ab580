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

    /**
     * Writes a fault's raw output ({@link Raw}) to {@link Raw#DIR}, then its table, computed from
     * those files alone ({@link Tables}), and its plot to {@link Report#DIR}.
     */
    static void report(
            String fault,
            String title,
            List<LoadRun> runs,
            int warmupS,
            int faultS,
            Map<Mode, Workload.Check> checks,
            Duration constantDelay) {
        Raw.save(Raw.DIR, new Raw.Fault(fault, title, warmupS, faultS, constantDelay.toMillis(), now()), runs, checks);
        Report.write(fault, title, runs, Tables.fault(Raw.DIR, fault));
    }

    /** The time now, UTC, to the minute: when a fault's runs ended. */
    static String now() {
        return java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")
                .format(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC));
    }

    static void assertNothingLost(Mode mode, Workload.Check c) {
        assertThat(c.missingInserts())
                .as("%s: acknowledged inserts not found at ALL", mode)
                .isEmpty();
        assertThat(c.missingLwts())
                .as("%s: applied IF NOT EXISTS inserts not found", mode)
                .isEmpty();
    }

    /**
     * Each non-idempotent statement, counted where it ran (the nodes' proxies, {@link Executions}):
     * one the client was answered for ran exactly once, on one node; one that failed ran at most
     * once; none ran that the client did not send. In the data: an acknowledged increment's own
     * counter row reads 1, a failed one's at most its executions; a conditional insert never found
     * its own row.
     */
    static void assertExactlyOnce(Mode mode, Workload.Check c) {
        assertThat(Executions.SEEN.unparsed())
                .as("bytes the proxies could not read as protocol v4 frames (the count would be incomplete)")
                .isZero();
        assertThat(c.statements()).as("%s: non-idempotent statements", mode).isNotEmpty();
        List<String> wrong = new ArrayList<>();
        for (Workload.Statement s : c.statements()) {
            boolean ok =
                    switch (s.told() == null ? Workload.Told.FAILED : s.told()) {
                        case ACKED, NOT_APPLIED ->
                            s.told() != null
                                    && s.executed() == 1
                                    && s.nodes() == 1
                                    && (s.kind() != Workload.Kind.COUNTER || s.row() == 1);
                        case FAILED ->
                            s.told() != null
                                    && s.executed() <= 1
                                    && (s.kind() != Workload.Kind.COUNTER || s.row() <= s.executed());
                    };
            if (!ok || s.told() == Workload.Told.NOT_APPLIED) {
                wrong.add(s.key() + " " + s.kind() + " told " + s.told() + ": executed per node "
                        + Arrays.toString(s.executedPerNode()) + ", refused " + s.refused() + ", row " + s.row());
            }
        }
        assertThat(wrong)
                .as(
                        "%s: statements not executed exactly once (answered) or at most once (failed), of %d;"
                                + " the first: %s",
                        mode, c.statements().size(), wrong.stream().limit(5).toList())
                .isEmpty();
    }
}

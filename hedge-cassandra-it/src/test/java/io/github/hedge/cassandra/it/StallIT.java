package io.github.hedge.cassandra.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A GC-pause-like stall: node 2 gets SIGSTOP after 20 s of steady load and SIGCONT 2 s later (its
 * connections stay open, nothing is refused), once per mode. With hedging no request waits out the
 * stall (asserted: the slowest idempotent request in flight during it takes under half of it). The
 * issue's tighter bound, twice the steady p99 plus the hedge delay, is reported beside the same
 * bound on fault-free intervals of the same run, which this machine exceeds too.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StallIT {
    static final Duration RUN = Duration.ofSeconds(28);
    static final int WARMUP_S = 8;
    static final int STALL_S = 20;
    static final Duration STALL = Duration.ofSeconds(2);
    static final int VICTIM = 2;

    private final Map<Mode, LoadRun> runs = new EnumMap<>(Mode.class);
    private final Map<Mode, Workload.Check> checks = new EnumMap<>(Mode.class);

    @BeforeAll
    void runEveryMode() {
        Fixture f = Fixture.get();
        Duration constantDelay = Duration.ofMillis(20);
        for (Mode mode : Mode.selected()) {
            // each mode reads a table of its own: a coordinator retries a read of the stalled replica
            // after its table's read p99 (speculative_retry '99p'): no mode inherits another's history
            String table = "kv_stall_" + mode.name().toLowerCase(java.util.Locale.ROOT);
            Workload.createReadTable(f.admin, table);
            LoadRun run;
            try (CqlSession s = mode.open(constantDelay)) {
                Fixture.waitAllUp(s);
                System.out.println("stall, " + mode + ", before the run: " + coordinatorReads(f.admin, table));
                run = LoadRun.run(
                        mode,
                        s,
                        table,
                        "stall-" + mode,
                        RUN,
                        0,
                        List.of(
                                new LoadRun.Event("fault", Duration.ofSeconds(STALL_S), () -> f.cluster.stall(VICTIM)),
                                new LoadRun.Event(
                                        "resume",
                                        Duration.ofSeconds(STALL_S).plus(STALL),
                                        () -> f.cluster.resume(VICTIM))));
            } finally {
                f.cluster.resume(VICTIM); // never leave a node stopped
            }
            runs.put(mode, run);
            System.out.println("stall, " + mode + ", after the run: " + coordinatorReads(f.admin, table));
            if (mode == Mode.NONE) {
                constantDelay = Scenario.sameExtraLoadDelay(run, WARMUP_S, STALL_S);
            }
            Fixture.waitAllUp(f.admin);
            checks.put(mode, Workload.check(f.admin, run.ledger));
        }
        runs.forEach((mode, run) -> System.out.println("stall, " + mode + ", slowest: " + slowest(run, 8)));
        Scenario.report(
                "stall",
                "SIGSTOP of node 2 for 2 s at " + STALL_S + " s",
                new ArrayList<>(runs.values()),
                WARMUP_S,
                STALL_S,
                checks,
                constantDelay,
                "issue target: max (in flight during the stall) <= 2 x steady p99 + delay (p95) | the same bound"
                        + " on the steady phase's 2 s intervals, no fault: intervals over it",
                r -> {
                    double bound = issueBound(r);
                    double max = maxAroundStall(r);
                    double[] steady = steadyWindowMaxima(r);
                    long over = java.util.Arrays.stream(steady)
                            .filter(m -> m > bound)
                            .count();
                    return (max <= bound ? "met" : "not met") + ": " + Report.f(max) + " vs " + Report.f(bound)
                            + " ms | " + over + " of " + steady.length + " (maxima "
                            + java.util.Arrays.stream(steady)
                                    .mapToObj(Report::f)
                                    .collect(java.util.stream.Collectors.joining(", "))
                            + " ms)";
                });
    }

    /**
     * The slowest idempotent requests around the stall, with their kind and consistency level and
     * when they started relative to the stall, so the report shows where a long wait comes from
     * (the client's choice of coordinator, or a coordinator waiting on the stalled replica).
     */
    static String slowest(LoadRun run, int n) {
        long fault = run.at("fault");
        return inFlight(run, fault, run.at("resume")).stream()
                .sorted(java.util.Comparator.comparingDouble(LoadRun.Sample::latencyMs)
                        .reversed())
                .limit(n)
                .map(s -> String.format(
                        java.util.Locale.ROOT,
                        "%s %s %.1f ms (started %+.0f ms from the stall)",
                        s.kind(),
                        s.consistency(),
                        s.latencyMs(),
                        (s.start() - fault) / 1e6))
                .collect(java.util.stream.Collectors.joining("; "));
    }

    /**
     * Each node's coordinator read latency for {@code ks.<table>} and for the shared {@code ks.kv}
     * ({@code system_views.coordinator_read_latency}: count, p99, max in ms): the history that
     * {@code speculative_retry '99p'} times a coordinator's retry of a slow replica by.
     */
    static String coordinatorReads(CqlSession admin, String table) {
        StringBuilder out = new StringBuilder();
        for (com.datastax.oss.driver.api.core.metadata.Node node :
                admin.getMetadata().getNodes().values()) {
            out.append(node.getEndPoint()).append(':');
            for (String t : List.of(table, "kv")) {
                com.datastax.oss.driver.api.core.cql.Row r = admin.execute(
                                com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance(
                                                "SELECT count, p99th_ms, max_ms FROM system_views.coordinator_read_latency"
                                                        + " WHERE keyspace_name = 'ks' AND table_name = ?",
                                                t)
                                        .setNode(node))
                        .one();
                out.append(
                        r == null
                                ? " " + t + " -"
                                : String.format(
                                        java.util.Locale.ROOT,
                                        " %s n=%d p99=%.1f max=%.1f",
                                        t,
                                        r.getLong("count"),
                                        r.getDouble("p99th_ms"),
                                        r.getDouble("max_ms")));
            }
            out.append("; ");
        }
        return out.toString();
    }

    static double issueBound(LoadRun run) {
        List<LoadRun.Sample> steady =
                run.window(WARMUP_S * Scenario.S, run.at("fault"), s -> s.kind().idempotent());
        return 2 * LoadRun.percentileMs(steady, 0.99) + LoadRun.percentileMs(steady, 0.95);
    }

    /**
     * The control for the issue's bound: the slowest idempotent request in flight during each
     * interval of the steady phase as long as the stall, before any fault. Where these exceed the
     * bound too, the machine alone exceeds it.
     */
    static double[] steadyWindowMaxima(LoadRun run) {
        long length = run.at("resume") - run.at("fault");
        long from = WARMUP_S * Scenario.S;
        long to = run.at("fault") - Scenario.S;
        List<Double> maxima = new ArrayList<>();
        for (long start = from; start + length <= to; start += length) {
            maxima.add(LoadRun.maxMs(inFlight(run, start, start + length)));
        }
        return maxima.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /**
     * The slowest idempotent request in flight at some time during the stall: every request that
     * could have waited for the stalled node (one that ended before SIGSTOP or started after
     * SIGCONT could not).
     */
    static double maxAroundStall(LoadRun run) {
        return LoadRun.maxMs(inFlight(run, run.at("fault"), run.at("resume")));
    }

    /** Idempotent requests in flight at some time in [fromNanos, toNanos). */
    static List<LoadRun.Sample> inFlight(LoadRun run, long fromNanos, long toNanos) {
        return run.samples.stream()
                .filter(s -> s.kind().idempotent() && s.start() < toNanos && s.end() > fromNanos)
                .toList();
    }

    /**
     * What is asserted: with hedging (both modes) no idempotent request fails through the stall.
     *
     * <p>The issue's bound (max <= 2 x steady p99 + the hedge delay) is reported per mode in
     * docs/reliability.md ("met"/"not met"), not asserted. On a quiet machine it was 3-22 ms in
     * fifteen CI runs, and the same bound on the steady phase's intervals as long as the stall,
     * with no fault at all, is exceeded too (the report's last column): the machine's own pauses
     * (up to 40-60 ms on 2 cores shared by three nodes and the client, the hiccup CSV) decide it,
     * not the stall.
     */
    @Test
    void should_fail_no_idempotent_request_when_a_node_stalls_with_hedging() {
        for (Map.Entry<Mode, LoadRun> e : Scenario.hedgingRuns(runs).entrySet()) {
            Mode mode = e.getKey();
            LoadRun run = e.getValue();
            assertThat(run.failures(s -> s.kind().idempotent()))
                    .as("%s: failures; first: %s", mode, Scenario.firstError(run))
                    .isZero();
        }
    }

    /**
     * Neither hedging mode waits out a stalled node; without hedging the slowest request waits
     * about the whole 2 s. The wrapped session moves primaries off a node with requests in flight
     * that has answered nothing for 4x its usual latency, and defers a hedge the budget cannot pay
     * at once until a token comes back; in the policy mode the driver's plans decide. The slowest
     * idempotent request around the stall took 4-60 ms in nine runs on 2026-11-22 and 23 (68-184 ms earlier, on
     * a loaded machine; 0.9-1.4 s in two runs of three before the wrapped session's stall
     * detection). Asserted with room: under half the stall.
     */
    @Test
    void should_not_wait_for_a_stalled_node_when_either_hedging_mode_hedges() {
        for (Map.Entry<Mode, LoadRun> e : Scenario.hedgingRuns(runs).entrySet()) {
            Mode mode = e.getKey();
            LoadRun run = e.getValue();
            assertThat(maxAroundStall(run))
                    .as("%s: slowest idempotent request around the stall, ms", mode)
                    .isLessThan(STALL.toMillis() / 2.0);
        }
    }

    @Test
    void should_read_back_every_acknowledged_write_when_a_node_stalls() {
        checks.forEach((mode, c) -> Scenario.assertNothingLost(mode, c));
    }

    @Test
    void should_apply_counter_updates_and_conditional_inserts_exactly_once_when_a_node_stalls() {
        checks.forEach((mode, c) -> Scenario.assertExactlyOnce(mode, c));
    }
}

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
 * A GC-pause-like stall: node 2 gets SIGSTOP after 40 s of steady load and SIGCONT 2 s later (its
 * connections stay open, nothing is refused), once per mode. Each hedging mode is judged against its
 * own control: the slowest idempotent request in flight during the stall may take no longer than
 * the slowest in flight during any fault-free window of the same length in the same run (same
 * mode, same load) plus the largest hedge delay while the stall lasted plus the coordinators' own
 * retry of a slow replica ({@link #SPECULATIVE_RETRY}), and no longer than a quarter of the slowest
 * without hedging. {@code -Dhedge.it.brokenHedging=true} ({@link Mode#BROKEN_HEDGING}) makes the
 * wrapped session a broken build that this bound catches.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StallIT {
    static final Duration RUN = Duration.ofSeconds(48);
    static final int WARMUP_S = 8;
    /**
     * When the stall starts, s. The control is the slowest request of each fault-free 2 s window
     * from the warm-up's end to 1 s before the stall: 15 windows. On this machine a fault-free
     * window's maximum is set by pauses of the machine (tens to hundreds of ms) as often as by the
     * cluster; with 5 windows a stall that changed nothing would still be the slowest of the 6
     * windows one time in 6 per mode, with 15 one time in 16. Latencies are judged with the test
     * JVM's own pauses taken out ({@link #netMs}), on both sides.
     */
    static final int STALL_S = 40;

    static final Duration STALL = Duration.ofSeconds(2);

    /** {@link #SPECULATIVE_RETRY} in ms. */
    static final int SPECULATIVE_RETRY_MS = 3;

    /**
     * The read tables' {@code speculative_retry}: a coordinator asks another replica when one has
     * not answered a read within 3 ms. Hedging chooses the coordinator, not the replicas it asks; with
     * the default {@code '99p'} a healthy coordinator that asked the stopped node for one of a
     * LOCAL_QUORUM read's two answers waited 10-26 ms (its table's p99) before asking the third,
     * which no client-side hedge can shorten, and the bound judged that wait. {@code 'ALWAYS'} made
     * such reads wait out the whole stall.
     */
    static final String SPECULATIVE_RETRY = SPECULATIVE_RETRY_MS + "ms";

    static final int VICTIM = 2;

    private final Map<Mode, LoadRun> runs = new EnumMap<>(Mode.class);
    private final Map<Mode, Workload.Check> checks = new EnumMap<>(Mode.class);

    @BeforeAll
    void runEveryMode() {
        Fixture f = Fixture.get();
        Duration constantDelay = Duration.ofMillis(20);
        for (Mode mode : Mode.selected()) {
            // each mode reads a table of its own, whose coordinators retry a read of a slow replica
            // after SPECULATIVE_RETRY: no mode inherits another's history
            String table = "kv_stall_" + mode.name().toLowerCase(java.util.Locale.ROOT);
            Workload.createReadTable(f.admin, table, SPECULATIVE_RETRY);
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
                constantDelay);
    }

    /**
     * The slowest idempotent requests around the stall, with their kind and consistency level and
     * when they started relative to the stall, so the report shows where a long wait comes from
     * (the client's choice of coordinator, or a coordinator waiting on the stalled replica).
     */
    static String slowest(LoadRun run, int n) {
        long fault = run.at("fault");
        return inFlight(run, fault, run.at("resume")).stream()
                .sorted(java.util.Comparator.comparingDouble((LoadRun.Sample s) -> netMs(run, s))
                        .reversed())
                .limit(n)
                .map(s -> {
                    double paused = pausedMs(run, s);
                    return String.format(
                            java.util.Locale.ROOT,
                            "%s %s %.1f ms%s (started %+.0f ms from the stall%s)",
                            s.kind(),
                            s.consistency(),
                            s.latencyMs(),
                            s.route().isEmpty() ? "" : " " + s.route(),
                            (s.start() - fault) / 1e6,
                            paused > 0
                                    ? String.format(java.util.Locale.ROOT, "; test JVM paused %.1f ms", paused)
                                    : "");
                })
                .collect(java.util.stream.Collectors.joining("; "));
    }

    /**
     * A request's latency with the test JVM's own pauses ({@link LoadRun#hiccups}) while it was in
     * flight taken out, ms: a pause of the client delays every request in flight and says nothing of
     * the cluster or of hedging. A broken build's 2 s wait for the stopped node stays 2 s.
     */
    static double netMs(LoadRun run, LoadRun.Sample s) {
        return s.latencyMs() - pausedMs(run, s);
    }

    /** The largest {@link #netMs} of {@code samples}; NaN when there are none. */
    static double maxNetMs(LoadRun run, List<LoadRun.Sample> samples) {
        return samples.stream().mapToDouble(s -> netMs(run, s)).max().orElse(Double.NaN);
    }

    /** How long the test JVM was paused ({@link LoadRun#hiccups}) while {@code s} was in flight, ms. */
    static double pausedMs(LoadRun run, LoadRun.Sample s) {
        long paused = 0;
        for (long[] h : run.hiccups) {
            long from = Math.max(h[0], s.start());
            long to = Math.min(h[0] + h[1], s.end());
            paused += Math.max(0, to - from);
        }
        return paused / 1e6;
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

    /**
     * The stall's bound for one run: {@code max} (the slowest idempotent request in flight during
     * the stall, ms, the test JVM's pauses taken out: {@link #netMs}) must be at most {@code
     * control} (the largest such maximum over the fault-free windows of the same length before the
     * stall) plus {@code delayMs} (the largest hedge delay the
     * session gave while the stall lasted, ms, as applied: in the driver-timed modes, plus the
     * driver's 1 ms timer tick; -1 when the session would send no hedge then, counted as 0) plus
     * {@code retryMs} (the coordinators' {@link #SPECULATIVE_RETRY}, ms: a hedge picks another
     * coordinator, which may still ask the stopped replica and wait this long before it asks
     * another; no fault-free window holds that wait), and at most a quarter of {@code noHedgingMax}
     * (the same maximum in the run without hedging; NaN when that mode did not run). {@code
     * hedges}: false for the run without hedging, which the bound does not apply to.
     */
    record Bound(double max, double control, double delayMs, double retryMs, double noHedgingMax, boolean hedges) {
        boolean applies() {
            return hedges;
        }

        /** control + delay + the coordinators' retry */
        double own() {
            return control + Math.max(0, delayMs) + retryMs;
        }

        double limit() {
            return Double.isNaN(noHedgingMax) ? own() : Math.min(own(), 0.25 * noHedgingMax);
        }

        boolean met() {
            return max <= limit();
        }
    }

    /**
     * The driver's timer tick in the driver-timed modes ({@link Mode}: 1 ms): the driver starts a
     * speculative execution at the first tick after its delay, so the delay it applies is up to one
     * tick longer than the policy's.
     */
    static final double DRIVER_TICK_MS = 1.0;

    static Bound bound(LoadRun run, LoadRun none) {
        double control = java.util.Arrays.stream(steadyWindowMaxima(run)).max().orElse(Double.NaN);
        double tick = run.mode == Mode.HEDGE_POLICY || run.mode == Mode.CONSTANT ? DRIVER_TICK_MS : 0;
        return new Bound(
                maxAroundStall(run),
                control,
                run.hedgeDelayMaxDuringFault < 0 ? -1 : run.hedgeDelayMaxDuringFault / 1e6 + tick,
                SPECULATIVE_RETRY_MS,
                none == null ? Double.NaN : maxAroundStall(none),
                run.mode != Mode.NONE);
    }

    /**
     * The control: the slowest idempotent request in flight during each window of the steady phase
     * as long as the stall (from the warm-up's end to 1 s before the stall), before any fault, by
     * {@link #netMs}.
     */
    static double[] steadyWindowMaxima(LoadRun run) {
        long length = run.at("resume") - run.at("fault");
        long from = WARMUP_S * Scenario.S;
        long to = run.at("fault") - Scenario.S;
        List<Double> maxima = new ArrayList<>();
        for (long start = from; start + length <= to; start += length) {
            maxima.add(maxNetMs(run, inFlight(run, start, start + length)));
        }
        return maxima.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /**
     * The slowest idempotent request in flight at some time during the stall, by {@link #netMs}:
     * every request that could have waited for the stalled node (one that ended before SIGSTOP or
     * started after SIGCONT could not).
     */
    static double maxAroundStall(LoadRun run) {
        return maxNetMs(run, inFlight(run, run.at("fault"), run.at("resume")));
    }

    /** Idempotent requests in flight at some time in [fromNanos, toNanos). */
    static List<LoadRun.Sample> inFlight(LoadRun run, long fromNanos, long toNanos) {
        return run.samples.stream()
                .filter(s -> s.kind().idempotent() && s.start() < toNanos && s.end() > fromNanos)
                .toList();
    }

    /** With hedging (both modes) no idempotent request fails through the stall. */
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
     * Neither hedging mode waits for a stalled node longer than its own fault-free control: the
     * slowest idempotent request in flight during the stall takes at most the largest maximum of
     * the same run's fault-free windows of the stall's length plus the largest hedge delay while
     * the stall lasted plus the coordinators' {@link #SPECULATIVE_RETRY},
     * and at most a quarter of the unhedged run's (which waits about the whole 2 s).
     */
    @Test
    void should_wait_no_longer_than_its_own_fault_free_windows_plus_the_hedge_delay_when_a_node_stalls() {
        LoadRun none = runs.get(Mode.NONE);
        for (Map.Entry<Mode, LoadRun> e : Scenario.hedgingRuns(runs).entrySet()) {
            Mode mode = e.getKey();
            Bound b = bound(e.getValue(), none);
            assertThat(b.max())
                    .as(
                            "%s: slowest idempotent request in flight during the stall, ms (test-JVM pauses taken out), vs the largest fault-free"
                                    + " window maximum %.1f ms (of %s) + largest hedge delay %.1f ms (%.1f ms at the"
                                    + " stall) + coordinators' retry %.1f ms; slowest: %s",
                            mode,
                            b.control(),
                            java.util.Arrays.toString(steadyWindowMaxima(e.getValue())),
                            b.delayMs(),
                            e.getValue().hedgeDelayAtFault / 1e6,
                            b.retryMs(),
                            slowest(e.getValue(), 6))
                    .isLessThanOrEqualTo(b.own());
            if (none != null) {
                assertThat(b.max())
                        .as(
                                "%s: slowest during the stall, ms, vs 0.25 x %.1f ms without hedging",
                                mode, b.noHedgingMax())
                        .isLessThanOrEqualTo(0.25 * b.noHedgingMax());
            }
        }
    }

    @Test
    void should_read_back_every_acknowledged_write_when_a_node_stalls() {
        checks.forEach((mode, c) -> Scenario.assertNothingLost(mode, c));
    }

    @Test
    void
            should_run_each_answered_non_idempotent_statement_once_on_one_node_and_each_failed_one_at_most_once_when_a_node_stalls() {
        checks.forEach((mode, c) -> Scenario.assertExactlyOnce(mode, c));
    }
}

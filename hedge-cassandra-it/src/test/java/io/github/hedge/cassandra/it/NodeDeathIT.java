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
 * Node death (seed 001, rapid read protection): node 2 is killed with {@code kill -9} after 18 s of
 * steady load, once per mode, and restarted afterwards. With hedging no request fails and no
 * second falls below half the steady rate while the driver has not yet marked the node down;
 * without hedging the table shows what the client suffers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NodeDeathIT {
    static final Duration RUN = Duration.ofSeconds(30);
    static final int WARMUP_S = 8;
    static final int KILL_S = 18;
    static final int VICTIM = 2;

    private final Map<Mode, LoadRun> runs = new EnumMap<>(Mode.class);
    private final Map<Mode, Workload.Check> checks = new EnumMap<>(Mode.class);

    @BeforeAll
    void runEveryMode() {
        Fixture f = Fixture.get();
        Duration constantDelay = Duration.ofMillis(20);
        for (Mode mode : Mode.selected()) {
            // each mode reads a table of its own: after the kill a coordinator waits its table's read
            // p99 (speculative_retry '99p') before it retries a read of the dead replica, and that p99
            // grew with every kill on a shared table, so the modes that ran later waited longer
            String table = "kv_death_" + mode.name().toLowerCase(java.util.Locale.ROOT);
            Workload.createReadTable(f.admin, table);
            LoadRun run;
            try (CqlSession s = mode.open(constantDelay)) {
                Fixture.waitAllUp(s);
                run = LoadRun.run(
                        mode,
                        s,
                        table,
                        "death-" + mode,
                        RUN,
                        VICTIM,
                        List.of(new LoadRun.Event("fault", Duration.ofSeconds(KILL_S), () -> f.cluster.kill9(VICTIM))));
            }
            runs.put(mode, run);
            if (mode == Mode.NONE) {
                constantDelay = Scenario.sameExtraLoadDelay(run, WARMUP_S, KILL_S);
            }
            f.cluster.restart(VICTIM);
            Fixture.waitAllUp(f.admin);
            checks.put(mode, Workload.check(f.admin, run.ledger));
        }
        Scenario.report(
                "node-death",
                "kill -9 of node 2 at " + KILL_S + " s",
                new ArrayList<>(runs.values()),
                WARMUP_S,
                KILL_S,
                checks,
                constantDelay);
    }

    @Test
    void should_fail_no_idempotent_request_when_a_node_is_killed_with_hedging() {
        for (Map.Entry<Mode, LoadRun> e : Scenario.hedgingRuns(runs).entrySet()) {
            Mode mode = e.getKey();
            LoadRun run = e.getValue();
            assertThat(run.failures(s -> s.kind().idempotent()))
                    .as("%s: failed idempotent requests; first: %s", mode, Scenario.firstError(run))
                    .isZero();
        }
    }

    @Test
    void should_keep_half_the_steady_rate_until_the_driver_marks_the_node_down_when_hedging() {
        for (Map.Entry<Mode, LoadRun> e : Scenario.hedgingRuns(runs).entrySet()) {
            Mode mode = e.getKey();
            LoadRun run = e.getValue();
            double steady = run.steadyRate(WARMUP_S, KILL_S);
            int from = (int) (run.at("fault") / 1_000_000_000L);
            int to = run.markedDownAt < 0
                    ? run.throughputPerSecond().length - 1
                    : (int) (run.markedDownAt / 1_000_000_000L);
            int[] t = run.throughputPerSecond();
            for (int s = from; s <= Math.min(to, t.length - 1); s++) {
                assertThat((double) t[s])
                        .as(
                                "%s: successful requests in second %d (steady %.0f/s, node marked down at %.2f s)",
                                mode, s, steady, run.markedDownAt / 1e9)
                        .isGreaterThanOrEqualTo(steady / 2);
            }
        }
    }

    @Test
    void should_read_back_every_acknowledged_write_when_a_node_is_killed() {
        checks.forEach((mode, c) -> Scenario.assertNothingLost(mode, c));
    }

    @Test
    void
            should_run_each_answered_non_idempotent_statement_once_on_one_node_and_each_failed_one_at_most_once_when_a_node_is_killed() {
        checks.forEach((mode, c) -> Scenario.assertExactlyOnce(mode, c));
    }
}

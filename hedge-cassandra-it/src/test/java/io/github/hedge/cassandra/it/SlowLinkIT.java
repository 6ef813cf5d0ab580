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
 * A slow link: after 20 s of steady load every answer of node 3 to clients takes 100 ms longer (the
 * {@link DelayProxy} in front of its CQL port), once per mode. With hedging the p99 of the slow
 * phase (from 5 s after the delay starts) stays within 1.3x of the same run's healthy phase.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlowLinkIT {
    static final Duration RUN = Duration.ofSeconds(40);
    static final int WARMUP_S = 8;
    static final int SLOW_S = 20;
    static final int SETTLE_S = 5;
    static final long DELAY_MS = 100;

    private final Map<Mode, LoadRun> runs = new EnumMap<>(Mode.class);
    private final Map<Mode, Workload.Check> checks = new EnumMap<>(Mode.class);

    @BeforeAll
    void runEveryMode() {
        Fixture f = Fixture.get();
        Duration constantDelay = Duration.ofMillis(20);
        for (Mode mode : Mode.selected()) {
            LoadRun run;
            try (CqlSession s = mode.open(constantDelay)) {
                Fixture.waitAllUp(s);
                run = LoadRun.run(
                        mode,
                        s,
                        "slow-" + mode,
                        RUN,
                        0,
                        List.of(new LoadRun.Event("fault", Duration.ofSeconds(SLOW_S), () -> f.cluster
                                .proxy()
                                .setDelay(DELAY_MS, 0))));
            } finally {
                f.cluster.proxy().setDelay(0, 0);
            }
            runs.put(mode, run);
            if (mode == Mode.NONE) {
                constantDelay = Scenario.sameExtraLoadDelay(run, WARMUP_S, SLOW_S);
            }
            checks.put(mode, Workload.check(f.admin, run.ledger));
        }
        Scenario.report(
                "slow-link",
                "+" + DELAY_MS + " ms on node 3's link from " + SLOW_S + " s",
                new ArrayList<>(runs.values()),
                WARMUP_S,
                SLOW_S,
                checks,
                constantDelay);
    }

    static double healthyP99(LoadRun run) {
        return LoadRun.percentileMs(
                run.window(WARMUP_S * Scenario.S, run.at("fault"), s -> s.kind().idempotent()), 0.99);
    }

    static double slowP99(LoadRun run) {
        return LoadRun.percentileMs(
                run.window(run.at("fault") + SETTLE_S * Scenario.S, Long.MAX_VALUE, s -> s.kind()
                        .idempotent()),
                0.99);
    }

    @Test
    void should_keep_p99_within_1_3x_of_the_healthy_cluster_when_one_link_is_slow_with_hedging() {
        for (Mode mode : List.of(Mode.HEDGE_WRAPPED, Mode.HEDGE_POLICY)) {
            LoadRun run = runs.get(mode);
            if (run == null) {
                continue;
            }
            assertThat(slowP99(run))
                    .as("%s: p99 (ms) with node 3 slow vs healthy %.1f ms", mode, healthyP99(run))
                    .isLessThanOrEqualTo(1.3 * healthyP99(run));
        }
    }

    @Test
    void should_read_back_every_acknowledged_write_when_a_link_is_slow() {
        checks.forEach((mode, c) -> Scenario.assertNothingLost(mode, c));
    }

    @Test
    void should_apply_counter_updates_and_conditional_inserts_exactly_once_when_a_link_is_slow() {
        checks.forEach((mode, c) -> Scenario.assertExactlyOnce(mode, c));
    }
}

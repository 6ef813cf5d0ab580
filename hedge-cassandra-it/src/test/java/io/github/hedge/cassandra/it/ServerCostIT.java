package io.github.hedge.cassandra.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What hedging costs the servers (seed 003: moving work between nodes changes their load, not
 * necessarily latency; measure it): on a healthy cluster at the same client rate, CQL requests
 * received per node ({@code system_views.thread_pools}, Native-Transport-Requests completed), local
 * reads and writes per node (ReadStage, MutationStage) and node CPU (/proc), per mode.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerCostIT {
    static final Duration RUN = Duration.ofSeconds(28);
    static final int FROM_S = 8;

    /** Per-node counters at one instant: pool name to completed tasks, and CPU ms. */
    record Snapshot(Map<Integer, Map<String, Long>> pools, Map<Integer, Long> cpuMs) {}

    private final Map<Mode, Map<Integer, Map<String, Long>>> received = new EnumMap<>(Mode.class);
    private final Map<Mode, Map<Integer, Long>> cpu = new EnumMap<>(Mode.class);
    private final Map<Mode, Long> clientRequests = new EnumMap<>(Mode.class);
    private final Map<Mode, LoadRun> runs = new EnumMap<>(Mode.class);

    static Snapshot snapshot(Fixture f) {
        Map<Integer, Map<String, Long>> pools = new TreeMap<>();
        Map<Integer, Long> cpuMs = new TreeMap<>();
        for (Node n : f.admin.getMetadata().getNodes().values()) {
            String host = n.getEndPoint().resolve().toString();
            int i = host.contains(RealCluster.clientIp(1) + ":")
                    ? 1
                    : host.contains(RealCluster.clientIp(2) + ":") ? 2 : 3;
            Map<String, Long> p = new TreeMap<>();
            for (Row r : f.admin.execute(
                    SimpleStatement.newInstance("SELECT name, completed_tasks FROM system_views.thread_pools")
                            .setNode(n))) {
                p.put(r.getString("name"), r.getLong("completed_tasks"));
            }
            pools.put(i, p);
            cpuMs.put(i, f.cluster.cpuMillis(i));
        }
        return new Snapshot(pools, cpuMs);
    }

    @BeforeAll
    void runEveryMode() throws IOException {
        Fixture f = Fixture.get();
        Duration constantDelay = Duration.ofMillis(20);
        for (Mode mode : Mode.selected()) {
            Snapshot[] before = new Snapshot[1];
            LoadRun run;
            try (CqlSession s = mode.open(constantDelay)) {
                Fixture.waitAllUp(s);
                run = LoadRun.run(
                        mode,
                        s,
                        "cost-" + mode,
                        RUN,
                        0,
                        List.of(new LoadRun.Event(
                                "measure", Duration.ofSeconds(FROM_S), () -> before[0] = snapshot(f))));
            }
            Snapshot after = snapshot(f);
            runs.put(mode, run);
            if (mode == Mode.NONE) {
                constantDelay = Scenario.sameExtraLoadDelay(run, FROM_S, (int) RUN.toSeconds());
            }
            Map<Integer, Map<String, Long>> delta = new TreeMap<>();
            Map<Integer, Long> cpuDelta = new TreeMap<>();
            for (int node : after.pools().keySet()) {
                Map<String, Long> d = new TreeMap<>();
                after.pools()
                        .get(node)
                        .forEach((name, v) ->
                                d.put(name, v - before[0].pools().get(node).getOrDefault(name, 0L)));
                delta.put(node, d);
                cpuDelta.put(node, after.cpuMs().get(node) - before[0].cpuMs().get(node));
            }
            received.put(mode, delta);
            cpu.put(mode, cpuDelta);
            clientRequests.put(mode, (long)
                    run.window(run.at("measure"), Long.MAX_VALUE, x -> true).size());
        }
        writeReport(constantDelay);
    }

    static long pool(Map<String, Long> pools, String name) {
        return pools.entrySet().stream()
                .filter(e -> e.getKey()
                        .toLowerCase(Locale.ROOT)
                        .replace("-", "")
                        .replace("_", "")
                        .contains(name))
                .mapToLong(Map.Entry::getValue)
                .sum();
    }

    long cqlRequests(Mode mode) {
        return received.get(mode).values().stream()
                .mapToLong(p -> pool(p, "nativetransportrequests"))
                .sum();
    }

    /** Raw output ({@link Raw}, plus per-node counters per mode), then the table computed from it. */
    private void writeReport(Duration constantDelay) throws IOException {
        String title = "Healthy cluster, " + (RUN.toSeconds() - FROM_S) + " s measured after " + FROM_S
                + " s of warm-up, " + LoadRun.RATE + " idempotent + " + LoadRun.NON_IDEMPOTENT_RATE
                + " non-idempotent req/s";
        Raw.save(
                Raw.DIR,
                new Raw.Fault("server-cost", title, FROM_S, FROM_S, constantDelay.toMillis(), Scenario.now()),
                new ArrayList<>(runs.values()),
                null);
        for (Mode mode : received.keySet()) {
            Map<String, String> p = new java.util.LinkedHashMap<>();
            for (int node : received.get(mode).keySet()) {
                Map<String, Long> pools = received.get(mode).get(node);
                p.put(
                        "node" + node + ".native_transport_requests",
                        String.valueOf(pool(pools, "nativetransportrequests")));
                p.put("node" + node + ".read_stage", String.valueOf(pool(pools, "readstage")));
                p.put("node" + node + ".mutation_stage", String.valueOf(pool(pools, "mutationstage")));
                p.put("node" + node + ".cpu_ms", String.valueOf(cpu.get(mode).get(node)));
            }
            Raw.writeProperties(Raw.DIR.resolve(Raw.file("server-cost", mode, "-nodes.properties")), p);
        }
        Files.createDirectories(Report.DIR);
        Files.writeString(Report.DIR.resolve("server-cost.md"), Tables.serverCost(Raw.DIR));
    }

    private static String per(Map<Integer, Map<String, Long>> d, String pool) {
        return d.values().stream()
                .map(p -> String.valueOf(pool(p, pool)))
                .reduce((a, b) -> a + " / " + b)
                .orElse("");
    }

    @Test
    void should_add_no_more_server_requests_than_its_budget_when_hedging_a_healthy_cluster() {
        if (!received.containsKey(Mode.NONE)) {
            return;
        }
        double none = (double) cqlRequests(Mode.NONE) / clientRequests.get(Mode.NONE);
        for (Mode mode : List.of(Mode.HEDGE_WRAPPED, Mode.HEDGE_POLICY)) {
            if (!received.containsKey(mode)) {
                continue;
            }
            double hedged = (double) cqlRequests(mode) / clientRequests.get(mode);
            // 5% budget, plus 5 points for the driver's own traffic (heartbeats, schema, metadata)
            assertThat(hedged)
                    .as("%s: CQL requests received per client request vs %.3f without hedging", mode, none)
                    .isLessThanOrEqualTo(none * 1.10);
        }
    }
}

package io.github.hedge.cassandra.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.loadbalancing.NodeDistance;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import io.github.hedge.cassandra.HedgedCqlSession;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * Seed 003 ("fat clients") scaled to this machine: three data nodes (RF 3) and one
 * coordinator-only node started with {@code -Dcassandra.join_ring=false}; the same open-loop write
 * rate (random partition keys, {@code LOCAL_QUORUM}) is sent (a) token-aware to the data nodes, (b)
 * only to the coordinator-only node, (c) as (a) through {@link HedgedCqlSession}. Per node it
 * measures the CPU time of the node's JVM (/proc), the CQL requests it received ({@code
 * system_views.thread_pools}), the writes it coordinated ({@code
 * system_views.coordinator_write_latency}) and applied locally ({@code local_write_latency}); per
 * mode the client's write latency (from each write's scheduled start, so a stalled client does not
 * hide latency). The table lands in {@code target/reliability/fat-client.md}.
 *
 * <p>Not part of the default build (it is a measurement, ~9 minutes, and needs a quiet machine):
 * the failsafe configuration excludes it; run it alone with {@code -Dit.test=FatClientIT}.
 * Settings (system properties): {@code hedge.fc.rate} writes/s (default 300), {@code
 * hedge.fc.initialWarmupSeconds} of unmeasured load per mode before the first round (20), {@code
 * hedge.fc.warmupSeconds} before each measured window (10), {@code hedge.fc.seconds} measured per
 * mode (40), {@code hedge.fc.rounds} (2; each round runs every mode once, the order rotating),
 * {@code hedge.fc.modes} (e.g. {@code DATA_NODES,COORDINATOR_ONLY}).
 */
class FatClientIT {
    static final double RATE = Double.parseDouble(System.getProperty("hedge.fc.rate", "300"));
    static final int WARMUP_S = Integer.getInteger("hedge.fc.warmupSeconds", 10);
    static final int MEASURE_S = Integer.getInteger("hedge.fc.seconds", 40);
    static final int ROUNDS = Integer.getInteger("hedge.fc.rounds", 2);
    /** unmeasured load per mode before the first round: the nodes' JIT warms up on every path */
    static final int INITIAL_WARMUP_S = Integer.getInteger("hedge.fc.initialWarmupSeconds", 20);
    /** the nodes' CPU with no load, measured once before any load */
    static final int IDLE_S = 10;
    /** writes in flight beyond which the generator skips a write and counts it (the client is saturated) */
    static final int MAX_IN_FLIGHT = 2000;

    static final int COORD = RealCluster.COORDINATOR_ONLY_NODE;
    static final int[] NODES = {1, 2, 3, COORD};
    static final String TABLE = "fatclient.w";

    /** Where the clients send their writes. */
    enum Target {
        /** (a) token-aware to the data nodes, as the driver does by default */
        DATA_NODES("(a) data nodes, token-aware"),
        /** (b) only to the coordinator-only node (the data nodes are IGNORED by a node distance evaluator) */
        COORDINATOR_ONLY("(b) coordinator-only node"),
        /** (c) as (a), through HedgedCqlSession.wrap with its defaults */
        HEDGED_DATA_NODES("(c) data nodes, hedge wrapped session");

        final String label;

        Target(String label) {
            this.label = label;
        }
    }

    /** Per-node server counters at one instant. */
    record Snapshot(long nanos, Map<Integer, long[]> perNode, double[] loadavg) {
        static final int CPU_MS = 0;
        static final int CQL_REQUESTS = 1;
        static final int COORDINATED_WRITES = 2;
        static final int LOCAL_WRITES = 3;
        static final int FIELDS = 4;

        long delta(Snapshot before, int node, int field) {
            return perNode.get(node)[field] - before.perNode.get(node)[field];
        }
    }

    /** One measured window of one mode. */
    record Result(
            Target target,
            int round,
            Snapshot before,
            Snapshot after,
            Histogram latencyMicros,
            long sent,
            long failed,
            long skipped,
            long clientCpuMs,
            long hedges,
            String firstError) {
        double seconds() {
            return (after.nanos() - before.nanos()) / 1e9;
        }
    }

    /** the nodes' CPU, cores, with no load */
    private double[] idle;

    static double[] cpuCores(Snapshot before, Snapshot after) {
        double sec = (after.nanos() - before.nanos()) / 1e9;
        return Arrays.stream(NODES)
                .mapToDouble(n -> after.delta(before, n, Snapshot.CPU_MS) / 1000.0 / sec)
                .toArray();
    }

    @Test
    void should_move_write_coordination_to_the_coordinator_only_node_when_clients_send_only_to_it() throws IOException {
        RealCluster cluster = RealCluster.withCoordinatorOnlyNode();
        List<String> topology = new ArrayList<>();
        List<Result> results = new ArrayList<>();
        // the admin session connects to the coordinator-only node: its system.local and system.peers
        // name all four nodes, where a data node's system.peers does not list it
        try (CqlSession admin = session(List.of(COORD), false)) {
            waitUp(admin, 4);
            try (CqlSession data = session(List.of(1, 2), false)) {
                waitUp(data, 3);
                createSchema(data);
                topology.addAll(describeTopology(admin, data));
            }
            assertThat(admin.checkSchemaAgreement())
                    .as("schema agreement, coordinator-only node included")
                    .isTrue();
            Snapshot idleFrom = snapshot(cluster, admin);
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(IDLE_S));
            idle = cpuCores(idleFrom, snapshot(cluster, admin));
            Target[] modes = selectedModes();
            for (Target target : modes) {
                run(cluster, admin, target, 0, INITIAL_WARMUP_S, 1); // discarded
            }
            for (int round = 1; round <= ROUNDS; round++) {
                for (int m = 0; m < modes.length; m++) {
                    Target target = modes[(m + round - 1) % modes.length];
                    results.add(run(cluster, admin, target, round, WARMUP_S, MEASURE_S));
                }
            }
        }
        String report = report(topology, idle, results);
        Files.createDirectories(Report.DIR);
        Files.writeString(Report.DIR.resolve("fat-client.md"), report);
        System.out.println(report);

        for (Result r : results) {
            long coordinatedByCoord = r.after.delta(r.before, COORD, Snapshot.COORDINATED_WRITES);
            long coordinatedByData = 0;
            for (int n = 1; n <= 3; n++) {
                coordinatedByData += r.after.delta(r.before, n, Snapshot.COORDINATED_WRITES);
            }
            assertThat(r.after.delta(r.before, COORD, Snapshot.LOCAL_WRITES))
                    .as("%s: the coordinator-only node stores nothing", r.target)
                    .isZero();
            if (r.target == Target.COORDINATOR_ONLY) {
                assertThat(coordinatedByData)
                        .as("%s: writes coordinated by the data nodes", r.target)
                        .isLessThanOrEqualTo(r.sent / 100);
                assertThat(coordinatedByCoord)
                        .as("%s: writes coordinated by the coordinator-only node", r.target)
                        .isGreaterThanOrEqualTo(r.sent * 9 / 10);
            } else {
                assertThat(coordinatedByCoord)
                        .as("%s: writes coordinated by the coordinator-only node", r.target)
                        .isZero();
                assertThat(coordinatedByData)
                        .as("%s: writes coordinated by the data nodes", r.target)
                        .isGreaterThanOrEqualTo(r.sent * 9 / 10);
            }
        }
    }

    static Target[] selectedModes() {
        String only = System.getProperty("hedge.fc.modes", "");
        if (only.isBlank()) {
            return Target.values();
        }
        return Arrays.stream(only.split(","))
                .map(String::trim)
                .map(Target::valueOf)
                .toArray(Target[]::new);
    }

    /**
     * A session with the given contact points; {@code onlyThose}: every other node is IGNORED, so
     * the driver opens no pool to it and no query plan contains it.
     */
    static CqlSession session(List<Integer> contactPoints, boolean onlyThose) {
        ProgrammaticDriverConfigLoaderBuilder config = Mode.baseConfig();
        List<InetSocketAddress> points = contactPoints.stream()
                .map(n -> new InetSocketAddress(RealCluster.ip(n), 9042))
                .toList();
        var b = CqlSession.builder()
                .addContactPoints(points)
                .withLocalDatacenter("datacenter1")
                .withConfigLoader(config.build());
        if (onlyThose) {
            b.withNodeDistanceEvaluator(
                    (node, localDc) -> points.contains(node.getEndPoint().resolve()) ? null : NodeDistance.IGNORED);
        }
        return b.build();
    }

    static void waitUp(CqlSession session, int nodes) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (session.getMetadata().getNodes().values().stream()
                        .filter(n -> n.getState() == NodeState.UP)
                        .count()
                < nodes) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("fewer than " + nodes + " nodes up after 2 minutes: "
                        + session.getMetadata().getNodes().values());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    static void createSchema(CqlSession data) {
        Duration ddl = Duration.ofSeconds(30);
        data.execute(SimpleStatement.newInstance("CREATE KEYSPACE IF NOT EXISTS fatclient WITH replication = "
                        + "{'class': 'SimpleStrategy', 'replication_factor': 3}")
                .setTimeout(ddl));
        data.execute(
                SimpleStatement.newInstance("CREATE TABLE IF NOT EXISTS " + TABLE + " (k bigint PRIMARY KEY, v blob)")
                        .setTimeout(ddl));
        data.checkSchemaAgreement();
    }

    static Node node(CqlSession s, int n) {
        InetSocketAddress address = new InetSocketAddress(RealCluster.ip(n), 9042);
        return s.getMetadata().getNodes().values().stream()
                .filter(x -> address.equals(x.getEndPoint().resolve()))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("the session does not know node " + n + ": "
                        + s.getMetadata().getNodes().values()));
    }

    /** What each side sees: the facts the seed's driver patch was about. */
    static List<String> describeTopology(CqlSession admin, CqlSession data) {
        List<String> out = new ArrayList<>();
        for (int n : NODES) {
            List<String> peers = new ArrayList<>();
            for (Row r : admin.execute(
                    SimpleStatement.newInstance("SELECT peer FROM system.peers").setNode(node(admin, n)))) {
                peers.add(r.getInetAddress("peer").getHostAddress());
            }
            Row local = admin.execute(SimpleStatement.newInstance("SELECT tokens FROM system.local")
                            .setNode(node(admin, n)))
                    .one();
            out.add("node " + n + " (" + RealCluster.ip(n) + "): system.local tokens "
                    + (local == null ? "none" : local.getSet("tokens", String.class)) + ", system.peers "
                    + peers.stream().sorted().toList());
        }
        out.add("a session with contact points node 1 and 2 knows " + nodeList(data));
        out.add("a session with contact point node " + COORD + " knows " + nodeList(admin));
        return out;
    }

    static String nodeList(CqlSession s) {
        return s.getMetadata().getNodes().values().stream()
                .map(n -> n.getEndPoint().resolve() + " " + n.getState())
                .sorted()
                .toList()
                .toString();
    }

    static Snapshot snapshot(RealCluster cluster, CqlSession admin) {
        Map<Integer, long[]> perNode = new TreeMap<>();
        for (int n : NODES) {
            Node node = node(admin, n);
            long[] v = new long[Snapshot.FIELDS];
            for (Row r : admin.execute(
                    SimpleStatement.newInstance("SELECT name, completed_tasks FROM system_views.thread_pools")
                            .setNode(node))) {
                String name = r.getString("name")
                        .toLowerCase(Locale.ROOT)
                        .replace("-", "")
                        .replace("_", "");
                if (name.equals("nativetransportrequests")) {
                    v[Snapshot.CQL_REQUESTS] = r.getLong("completed_tasks");
                }
            }
            v[Snapshot.COORDINATED_WRITES] = count(admin, node, "coordinator_write_latency");
            v[Snapshot.LOCAL_WRITES] = count(admin, node, "local_write_latency");
            v[Snapshot.CPU_MS] = cluster.cpuMillis(n);
            perNode.put(n, v);
        }
        return new Snapshot(System.nanoTime(), perNode, loadavg());
    }

    static long count(CqlSession admin, Node node, String table) {
        Row r = admin.execute(SimpleStatement.newInstance("SELECT count FROM system_views." + table
                                + " WHERE keyspace_name = 'fatclient' AND table_name = 'w'")
                        .setNode(node))
                .one();
        return r == null ? 0 : r.getLong("count");
    }

    static double[] loadavg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2])};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** CPU time this JVM (the client) has used, ms. */
    static long clientCpuMillis() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Opens the mode's session, sends {@link #RATE} writes/s open loop (each write scheduled at a
     * fixed time, sent asynchronously, its latency measured from the scheduled time) for the
     * warm-up and the measured window, and takes the server counters around the window.
     */
    static Result run(RealCluster cluster, CqlSession admin, Target target, int round, int warmupS, int measureS) {
        CqlSession driver =
                target == Target.COORDINATOR_ONLY ? session(List.of(COORD), true) : session(List.of(1, 2), false);
        waitUp(driver, target == Target.COORDINATOR_ONLY ? 1 : 3);
        CqlSession s = target == Target.HEDGED_DATA_NODES ? HedgedCqlSession.wrap(driver) : driver;
        try {
            PreparedStatement insert = s.prepare("INSERT INTO " + TABLE + " (k, v) VALUES (?, ?)");
            Histogram hist = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
            AtomicInteger inFlight = new AtomicInteger();
            AtomicLong sent = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            AtomicLong skipped = new AtomicLong();
            String[] firstError = new String[1];
            long interval = (long) (1e9 / RATE);
            long t0 = System.nanoTime();
            long measureFrom = t0 + TimeUnit.SECONDS.toNanos(warmupS);
            long end = measureFrom + TimeUnit.SECONDS.toNanos(measureS);
            // the counters are read on another thread at the window's start, so that the generator
            // keeps its schedule meanwhile
            ScheduledExecutorService snapshotter = Executors.newSingleThreadScheduledExecutor();
            ScheduledFuture<Object[]> beforeFuture = snapshotter.schedule(
                    () -> new Object[] {
                        snapshot(cluster, admin),
                        clientCpuMillis(),
                        s instanceof HedgedCqlSession h ? h.executor().stats().hedgesSent() : 0L
                    },
                    measureFrom - System.nanoTime(),
                    TimeUnit.NANOSECONDS);
            snapshotter.shutdown();
            byte[] value = new byte[100];
            for (long next = t0; next < end; next += interval) {
                long now = System.nanoTime();
                if (next > now) {
                    LockSupport.parkNanos(next - now);
                }
                boolean measured = next >= measureFrom;
                if (inFlight.get() >= MAX_IN_FLIGHT) {
                    if (measured) {
                        skipped.incrementAndGet();
                    }
                    continue;
                }
                inFlight.incrementAndGet();
                if (measured) {
                    sent.incrementAndGet();
                }
                long scheduled = next;
                ThreadLocalRandom.current().nextBytes(value);
                s.executeAsync(insert.bind(ThreadLocalRandom.current().nextLong(), ByteBuffer.wrap(value.clone()))
                                .setIdempotent(true)
                                .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM))
                        .whenComplete((rs, error) -> {
                            long done = System.nanoTime();
                            inFlight.decrementAndGet();
                            if (!measured) {
                                return;
                            }
                            if (error == null) {
                                synchronized (hist) {
                                    hist.recordValue(
                                            Math.min(hist.getHighestTrackableValue(), (done - scheduled) / 1000));
                                }
                            } else {
                                failed.incrementAndGet();
                                synchronized (hist) {
                                    if (firstError[0] == null) {
                                        firstError[0] = error.toString();
                                    }
                                }
                            }
                        });
            }
            long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (inFlight.get() > 0 && System.nanoTime() < drainDeadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            Object[] b = join(beforeFuture);
            Snapshot before = (Snapshot) b[0];
            Snapshot after = snapshot(cluster, admin);
            long clientCpu = clientCpuMillis() - (Long) b[1];
            long hedges = s instanceof HedgedCqlSession h ? h.executor().stats().hedgesSent() - (Long) b[2] : 0;
            synchronized (hist) {
                return new Result(
                        target,
                        round,
                        before,
                        after,
                        hist.copy(),
                        sent.get(),
                        failed.get(),
                        skipped.get(),
                        clientCpu,
                        hedges,
                        firstError[0]);
            }
        } finally {
            s.close();
        }
    }

    static Object[] join(ScheduledFuture<Object[]> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("reading the nodes' counters failed", e.getCause());
        }
    }

    static String report(List<String> topology, double[] idle, List<Result> results) {
        StringBuilder b = new StringBuilder();
        b.append("Seed 003 at this machine's scale: 3 data nodes (RF 3) + 1 coordinator-only node (join_ring=false), ")
                .append(Report.f(RATE))
                .append(" writes/s open loop, LOCAL_QUORUM, random partition keys, 100-byte values; ")
                .append(WARMUP_S)
                .append(" s warm-up then ")
                .append(MEASURE_S)
                .append(" s measured per mode, ")
                .append(ROUNDS)
                .append(" rounds (the order of the modes rotating) after ")
                .append(INITIAL_WARMUP_S)
                .append(" s of unmeasured load per mode; ")
                .append(Instant.now())
                .append(".\n\n");
        b.append("Topology:\n\n");
        topology.forEach(t -> b.append("- ").append(t).append('\n'));
        b.append('\n');
        b.append("| mode | round | writes/s done | p50 ms | p99 ms | p99.9 ms | max ms | failed | skipped"
                + " | CQL requests received 1 / 2 / 3 / C | writes coordinated 1 / 2 / 3 / C"
                + " | local writes 1 / 2 / 3 / C | node CPU, cores: 1 / 2 / 3 / C | data nodes' CPU, cores"
                + " | all nodes' CPU, cores | client CPU, cores | hedges | load avg (1 min) before → after |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Result r : results) {
            Histogram h = r.latencyMicros;
            double sec = r.seconds();
            double dataCpu = 0;
            double allCpu = 0;
            for (int n : NODES) {
                double c = r.after.delta(r.before, n, Snapshot.CPU_MS) / 1000.0 / sec;
                allCpu += c;
                if (n != COORD) {
                    dataCpu += c;
                }
            }
            b.append("| ")
                    .append(r.target.label)
                    .append(" | ")
                    .append(r.round)
                    .append(" | ")
                    .append(Report.f(h.getTotalCount() / (double) MEASURE_S))
                    .append(" | ")
                    .append(ms(h.getValueAtPercentile(50)))
                    .append(" | ")
                    .append(ms(h.getValueAtPercentile(99)))
                    .append(" | ")
                    .append(ms(h.getValueAtPercentile(99.9)))
                    .append(" | ")
                    .append(ms(h.getMaxValue()))
                    .append(" | ")
                    .append(r.failed)
                    .append(" | ")
                    .append(r.skipped)
                    .append(" | ")
                    .append(perNode(r, Snapshot.CQL_REQUESTS))
                    .append(" | ")
                    .append(perNode(r, Snapshot.COORDINATED_WRITES))
                    .append(" | ")
                    .append(perNode(r, Snapshot.LOCAL_WRITES))
                    .append(" | ")
                    .append(Arrays.stream(NODES)
                            .mapToObj(n -> String.format(
                                    Locale.ROOT, "%.3f", r.after.delta(r.before, n, Snapshot.CPU_MS) / 1000.0 / sec))
                            .reduce((x, y) -> x + " / " + y)
                            .orElse(""))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%.3f", dataCpu))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%.3f", allCpu))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%.3f", r.clientCpuMs / 1000.0 / sec))
                    .append(" | ")
                    .append(r.target == Target.HEDGED_DATA_NODES ? String.valueOf(r.hedges) : "-")
                    .append(" | ")
                    .append(Report.f(r.before.loadavg()[0]))
                    .append(" → ")
                    .append(Report.f(r.after.loadavg()[0]))
                    .append(" |\n");
        }
        b.append("| no load (idle, ")
                .append(IDLE_S)
                .append(" s before any load) | | | | | | | | | | | | ")
                .append(Arrays.stream(idle)
                        .mapToObj(c -> String.format(Locale.ROOT, "%.3f", c))
                        .reduce((x, y) -> x + " / " + y)
                        .orElse(""))
                .append(" | ")
                .append(String.format(Locale.ROOT, "%.3f", idle[0] + idle[1] + idle[2]))
                .append(" | ")
                .append(String.format(Locale.ROOT, "%.3f", Arrays.stream(idle).sum()))
                .append(" | | | |\n");
        b.append("\nC = the coordinator-only node (node ")
                .append(COORD)
                .append("). CPU: user + system time of each node's JVM from /proc/<pid>/stat over the window, divided"
                        + " by the window's length. Latency from each write's scheduled start to its answer.\n");
        for (Result r : results) {
            if (r.firstError != null) {
                b.append("\nFirst error, ")
                        .append(r.target.label)
                        .append(" round ")
                        .append(r.round)
                        .append(": ")
                        .append(r.firstError)
                        .append('\n');
            }
        }
        return b.toString();
    }

    static String ms(long micros) {
        return String.format(Locale.ROOT, "%.2f", micros / 1000.0);
    }

    static String perNode(Result r, int field) {
        return Arrays.stream(NODES)
                .mapToObj(n -> String.valueOf(r.after.delta(r.before, n, field)))
                .reduce((x, y) -> x + " / " + y)
                .orElse("");
    }
}

package io.github.hedge.examples.demo;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.loadbalancing.NodeDistance;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.Subscription;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The demo against a Cassandra cluster ({@code --cassandra host:port,...}): the same open-loop load of
 * idempotent reads through three sessions in turn: a plain {@link CqlSession}, hedge-cassandra's
 * {@link HedgedCqlSession} (p96 of per-attempt latency, 5% budget, latency-aware ordering) and a
 * session whose driver runs its own {@code ConstantSpeculativeExecutionPolicy}, its delay set to the
 * delay hedge-cassandra reached and the driver's timer at a 1 ms tick (its 100 ms default would round
 * every delay up). Nothing is written to the cluster unless {@code --create-schema} asks for the demo's
 * table. Not thread-safe: one run at a time.
 *
 * <p>How attempts are counted: the driver's {@link ExecutionInfo} says how many speculative
 * executions a request fired and which one answered; hedge-cassandra's attempts are driver requests
 * of their own, so they are counted from its executor's {@link CallCompleted} events, each of which
 * lists the call's attempts and the node each went to.
 */
final class CassandraDemo {
    static final String DEFAULT_KEYSPACE = "hedge_demo";
    static final String DEFAULT_TABLE = "kv";

    /** Schema changes wait for agreement between the nodes: seconds on a real cluster. */
    private static final Duration DDL_TIMEOUT = Duration.ofSeconds(30);

    private static final List<String> READ_LEVELS =
            List.of("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM", "SERIAL", "LOCAL_SERIAL");

    private CassandraDemo() {}

    /**
     * What only the Cassandra mode measures.
     *
     * @param nodes the local datacenter's nodes, "host:port", in the order of the columns below
     * @param answersByNode per phase label, how many measured calls each node answered (the
     *     coordinator of the answer the caller got)
     * @param hedgeCassandraHedges hedges hedge-cassandra sent for the measured calls
     * @param hedgeCassandraHedgesToUntriedNodes of those, hedges sent to a node the call had not tried
     */
    record Stats(
            List<String> nodes,
            Map<String, Map<String, Long>> answersByNode,
            long hedgeCassandraHedges,
            long hedgeCassandraHedgesToUntriedNodes) {}

    /**
     * @param cql the {@code --cql} value
     * @return it, checked: a statement the demo may run again and again
     */
    static String readStatement(String cql) {
        String s = cql.trim();
        if (!s.regionMatches(true, 0, "SELECT ", 0, 7)) {
            throw new IllegalArgumentException(
                    "--cql must be a SELECT (only a read is safe to send twice), was \"" + cql + "\"");
        }
        if (s.indexOf('?') >= 0) {
            throw new IllegalArgumentException(
                    "--cql runs the statement as is, so it must have no bind marker (?), was \"" + cql + "\"");
        }
        return s;
    }

    /**
     * @param value the {@code --consistency} value
     * @return the consistency level's name
     */
    static String consistency(String value) {
        String v = value.trim().toUpperCase(Locale.ROOT);
        if (!READ_LEVELS.contains(v)) {
            throw new IllegalArgumentException("--consistency must be a read consistency level, one of " + READ_LEVELS
                    + ", was \"" + value + "\"");
        }
        return DefaultConsistencyLevel.valueOf(v).name();
    }

    static HedgeDemo.Summary run(HedgeDemo.Options o, PrintStream out) throws IOException, InterruptedException {
        long measurePerMode = Math.round(o.seconds * 1000 / o.modes.size());
        long warmup = Math.round(o.warmupSeconds * 1000);
        List<String> setup = new ArrayList<>();
        List<String> nodes;
        try (CqlSession admin = connect(o, "setup", 0)) {
            List<Node> local = admin.getMetadata().getNodes().values().stream()
                    .filter(n -> n.getDistance() == NodeDistance.LOCAL)
                    .collect(Collectors.toList());
            String dc = local.isEmpty() ? o.datacenter : local.get(0).getDatacenter();
            nodes = local.stream().map(n -> address(n)).sorted().collect(Collectors.toList());
            setup.add(String.format(
                    Locale.ROOT,
                    "backend: Cassandra cluster at %s, local datacenter %s (%d nodes), consistency %s",
                    o.cassandra.stream()
                            .map(a -> a.getHostString() + ":" + a.getPort())
                            .collect(Collectors.joining(",")),
                    dc,
                    local.size(),
                    o.consistency));
            if (o.createSchema) {
                setup.add(createSchema(admin, o, dc, local.size()));
            }
            setup.add(
                    o.cql != null
                            ? "reads: " + o.cql + " (as is, marked idempotent)"
                            : String.format(
                                    Locale.ROOT,
                                    "reads: SELECT v FROM %s.%s WHERE k = ? for a random k in [0, %d), marked idempotent,"
                                            + " routed to the key's replicas",
                                    o.keyspace,
                                    o.table,
                                    o.keys));
            probe(admin, o);
        }
        setup.add(String.format(
                Locale.ROOT,
                "load: %s reads/s open-loop, %s s measured per mode after %s s of warm-up, request timeout %d ms",
                HedgeDemo.trim(o.rate),
                HedgeDemo.trim(measurePerMode / 1000.0),
                HedgeDemo.trim(o.warmupSeconds),
                o.deadlineMillis));
        long jvmWarmup = Math.round(o.jvmWarmupSeconds * 1000);
        if (jvmWarmup > 0) {
            setup.add(HedgeDemo.jvmWarmupLine(o, "session"));
        }
        out.println("hedge demo");
        for (String line : setup) {
            out.println("  " + line);
        }
        out.println();
        int printed = setup.size();

        HedgeDemo.ConsoleProgress progress =
                new HedgeDemo.ConsoleProgress(out, o.progress, o.modes.size(), warmup + measurePerMode);
        List<PhaseResult> phases = new ArrayList<>();
        Map<String, Map<String, Long>> answers = new LinkedHashMap<>();
        long hedges = 0;
        long hedgesToUntried = 0;
        Double nativeDelay = o.nativeDelayMillis;
        String nativeDelaySource = "";
        if (jvmWarmup > 0) {
            out.printf(
                    Locale.ROOT,
                    "warming the JVM: each mode %s s on a session of its own, not recorded%n",
                    HedgeDemo.trim(o.jvmWarmupSeconds));
            for (String mode : new LinkedHashSet<>(o.modes)) {
                ModeSession m = open(mode, o, "hedge-demo-jvm-warmup", nativeDelay);
                try {
                    new LoadDriver(sender(m.session(), reads(o), m.hedged() == null), o.deadlineMillis)
                            .warm(o.rate, jvmWarmup);
                } finally {
                    m.session().close();
                }
            }
        }
        for (String mode : o.modes) {
            if (mode.equals("native") && nativeDelay == null) {
                nativeDelay = HedgeDemo.DEFAULT_NATIVE_DELAY_MILLIS;
                nativeDelaySource = " (default)";
            }
            ModeSession opened = open(mode, o, "hedge-demo", nativeDelay);
            String label = opened.label();
            CqlSession session = opened.session();
            HedgedCqlSession hedged = opened.hedged();
            if (hedged != null) {
                setup.add(String.format(
                        Locale.ROOT,
                        "hedge-cassandra: HedgedCqlSession, hedge after the p%s of recent per-attempt latency,"
                                + " budget %s%% extra attempts, maxAttempts %d, latency-aware ordering",
                        HedgeDemo.trim(100 * o.hedgePercentile),
                        HedgeDemo.trim(100 * o.budget),
                        o.maxAttempts));
            } else if (mode.equals("native")) {
                setup.add(String.format(
                        Locale.ROOT,
                        "driver speculative: ConstantSpeculativeExecutionPolicy, max-executions %d, delay %d ms%s,"
                                + " advanced.netty.timer.tick-duration 1 ms",
                        o.maxAttempts,
                        Math.round(nativeDelay),
                        nativeDelaySource));
            }
            Queue<CallCompleted> completed = new ConcurrentLinkedQueue<>();
            Subscription subscription =
                    hedged == null ? null : hedged.executor().events().subscribe(CallCompleted.class, completed::add);
            progress.startPhase(label);
            try {
                boolean driverCounts = hedged == null;
                LoadDriver driver = new LoadDriver(sender(session, reads(o), driverCounts), o.deadlineMillis);
                LoadDriver.Measured m = driver.measure(label, o.rate, warmup, measurePerMode, progress);
                PhaseResult r = m.result();
                Map<String, Long> byNode = new TreeMap<>();
                nodes.forEach(n -> byNode.put(n, 0L));
                for (LoadDriver.Call c : m.calls()) {
                    if (c.done && c.ok && c.answeredBy != null) {
                        byNode.merge(c.answeredBy, 1L, Long::sum);
                    }
                }
                answers.put(label, byNode);
                if (hedged != null) {
                    // the executor's calls started in the measured window are the measured calls
                    long attempts = 0;
                    long won = 0;
                    long events = 0;
                    for (CallCompleted e : completed) {
                        if (e.timestampNanos() - e.totalNanos() < m.measureStartNanos()) {
                            continue;
                        }
                        events++;
                        attempts += Math.max(1, e.attempts().size());
                        won += e.hedgeWon() ? 1 : 0;
                        Set<String> tried = new HashSet<>();
                        for (AttemptRecord a : e.attempts()) {
                            boolean untried = tried.add(a.target());
                            if (a.attemptNumber() > 1) {
                                hedges++;
                                hedgesToUntried += untried ? 1 : 0;
                            }
                        }
                    }
                    // a call the executor never saw (no node at all) was one attempt
                    r = r.withAttempts(attempts + Math.max(0, r.calls() - events), won);
                    if (o.nativeDelayMillis == null) {
                        long nanos = hedged.executor().currentDelayNanos();
                        if (nanos > 0 && nanos < TimeUnit.MILLISECONDS.toNanos(o.deadlineMillis)) {
                            // the driver's delays are whole milliseconds
                            nativeDelay = Math.max(1.0, Math.ceil(nanos / 1e6));
                            nativeDelaySource = " (the delay hedge-cassandra had reached)";
                        }
                    }
                } else if (mode.equals("none")
                        && o.nativeDelayMillis == null
                        && nativeDelay == null
                        && r.successes() > 0) {
                    nativeDelay = Math.max(1.0, Math.ceil(r.percentileMillis(0.95)));
                    nativeDelaySource = " (the p95 measured without hedging)";
                }
                phases.add(r);
            } finally {
                if (subscription != null) {
                    subscription.close();
                }
                session.close();
            }
        }
        progress.done();
        out.println();
        HedgeDemo.printTable(out, phases);
        out.println();
        // the modes' settings, known only once the modes before them had run
        for (String line : setup.subList(printed, setup.size())) {
            out.println("  " + line);
        }
        out.printf(Locale.ROOT, "%nanswers per node, measured calls (%s):%n", String.join(" / ", nodes));
        for (Map.Entry<String, Map<String, Long>> e : answers.entrySet()) {
            out.printf(
                    Locale.ROOT,
                    "  %-20s %s%n",
                    e.getKey(),
                    e.getValue().values().stream().map(String::valueOf).collect(Collectors.joining(" / ")));
        }
        if (o.modes.contains("hedge")) {
            out.printf(
                    Locale.ROOT,
                    "hedge-cassandra sent %d hedges for the measured calls, %d of them to a node the call had not"
                            + " tried%n",
                    hedges,
                    hedgesToUntried);
        }
        out.println("  extra load = executions sent / calls - 1; hedges won = calls answered by an execution other"
                + " than the first");
        Path report = o.report.toAbsolutePath().normalize();
        HtmlReport.write(report, "hedge demo: Cassandra", setup, phases);
        out.println();
        out.println("HTML report: " + HedgeDemo.shown(report));
        return new HedgeDemo.Summary(
                List.copyOf(phases), report, new long[0], new Stats(nodes, answers, hedges, hedgesToUntried));
    }

    /** One mode's session, with hedge-cassandra's wrapper for the {@code hedge} mode (else null). */
    private record ModeSession(String label, CqlSession session, HedgedCqlSession hedged) {}

    /**
     * A new session for one mode; for {@code hedge}, a new {@link HedgedCqlSession} (a new executor:
     * its delay and budget start from nothing) with hedge-cassandra's defaults as set on the command line.
     *
     * @param name the hedged session's name
     * @param nativeDelay the driver's constant speculative delay for the {@code native} mode,
     *     milliseconds; null for {@link HedgeDemo#DEFAULT_NATIVE_DELAY_MILLIS}
     */
    private static ModeSession open(String mode, HedgeDemo.Options o, String name, Double nativeDelay) {
        switch (mode) {
            case "none" -> {
                return new ModeSession("no hedging", connect(o, mode, 0), null);
            }
            case "hedge" -> {
                // hedge-cassandra's defaults (p96 delay under a 5% budget), as set on the command line
                HedgedCqlSession hedged = HedgedCqlSession.builder(connect(o, mode, 0))
                        .name(name)
                        .hedgeConfig(HedgeConfig.from(HedgedCqlSession.defaultConfig())
                                .delay(DelayPolicy.percentile(o.hedgePercentile).build())
                                .budgetRatio(o.budget)
                                .maxAttempts(o.maxAttempts)
                                .build())
                        .build();
                return new ModeSession("hedge-cassandra", hedged, hedged);
            }
            default -> {
                return new ModeSession(
                        "driver speculative",
                        connect(
                                o,
                                mode,
                                Math.round(nativeDelay == null ? HedgeDemo.DEFAULT_NATIVE_DELAY_MILLIS : nativeDelay)),
                        null);
            }
        }
    }

    /** A session for one mode; {@code "native"} gets the driver's constant speculative policy. */
    private static CqlSession connect(HedgeDemo.Options o, String mode, long nativeDelayMillis) {
        ProgrammaticDriverConfigLoaderBuilder config = DriverConfigLoader.programmaticBuilder()
                .withString(DefaultDriverOption.SESSION_NAME, "hedge-demo-" + mode)
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofMillis(o.deadlineMillis))
                .withString(DefaultDriverOption.REQUEST_CONSISTENCY, o.consistency);
        if (o.datacenter == null) {
            // the driver's policy that takes the contact points' datacenter as the local one
            config.withString(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, "DcInferringLoadBalancingPolicy");
        }
        if (mode.equals("native")) {
            config.withString(
                            DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS,
                            "ConstantSpeculativeExecutionPolicy")
                    .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, o.maxAttempts)
                    .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, Duration.ofMillis(nativeDelayMillis))
                    // the default 100 ms tick fires a 10 ms delay after tens of milliseconds
                    .withDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(1));
        }
        CqlSessionBuilder b = CqlSession.builder().addContactPoints(o.cassandra).withConfigLoader(config.build());
        if (o.datacenter != null) {
            b.withLocalDatacenter(o.datacenter);
        }
        return b.build();
    }

    /** The reads: idempotent statements, the demo's table routed by key, or the --cql statement. */
    private static Supplier<Statement<?>> reads(HedgeDemo.Options o) {
        if (o.cql != null) {
            SimpleStatement s = SimpleStatement.newInstance(o.cql).setIdempotent(true);
            return () -> s;
        }
        String query = "SELECT v FROM " + o.keyspace + "." + o.table + " WHERE k = ?";
        SplittableRandom random = new SplittableRandom(o.seed);
        return () -> {
            int k = random.nextInt(o.keys);
            return SimpleStatement.newInstance(query, k)
                    // the replicas of the key, without a prepared statement's metadata
                    .setRoutingKeyspace(o.keyspace)
                    .setRoutingKey(TypeCodecs.INT.encode(k, ProtocolVersion.DEFAULT))
                    .setIdempotent(true);
        };
    }

    /** Sends each call's read; counts executions from the driver's {@link ExecutionInfo} when asked. */
    private static LoadDriver.Sender sender(
            CqlSession session, Supplier<Statement<?>> reads, boolean countFromExecutionInfo) {
        return c -> session.executeAsync(reads.get()).whenComplete((rs, error) -> {
            if (rs != null) {
                ExecutionInfo info = rs.getExecutionInfo();
                if (countFromExecutionInfo) {
                    c.attempts.set(1 + info.getSpeculativeExecutionCount());
                    c.winner.set(1 + info.getSuccessfulExecutionIndex());
                }
                c.answeredBy = info.getCoordinator() == null ? null : address(info.getCoordinator());
            }
            c.finish(error == null);
        });
    }

    /** One read before any load, so a missing table is reported once, with what to do. */
    private static void probe(CqlSession session, HedgeDemo.Options o) {
        try {
            session.execute(reads(o).get());
        } catch (InvalidQueryException e) {
            String hint = o.cql == null && !o.createSchema
                    ? "; --create-schema creates the demo's table, --cql reads one of yours"
                    : "";
            throw new IllegalArgumentException("the demo's reads fail: " + e.getMessage() + hint, e);
        }
    }

    /** Creates the keyspace and table if absent and writes --keys rows; says what it did. */
    private static String createSchema(CqlSession session, HedgeDemo.Options o, String dc, int localNodes)
            throws InterruptedException {
        if (dc == null) {
            throw new IllegalArgumentException("--create-schema needs the local datacenter: pass --datacenter");
        }
        int rf = Math.max(1, Math.min(3, localNodes));
        session.execute(SimpleStatement.newInstance(String.format(
                        Locale.ROOT,
                        "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'NetworkTopologyStrategy',"
                                + " '%s': %d}",
                        o.keyspace,
                        dc.replace("'", "''"),
                        rf))
                .setTimeout(DDL_TIMEOUT));
        session.execute(SimpleStatement.newInstance(
                        "CREATE TABLE IF NOT EXISTS " + o.keyspace + "." + o.table + " (k int PRIMARY KEY, v text)")
                .setTimeout(DDL_TIMEOUT));
        // the rows, 64 writes in flight at a time; the same rows each time, so a rerun rewrites them
        String insert = "INSERT INTO " + o.keyspace + "." + o.table + " (k, v) VALUES (?, ?)";
        Semaphore inFlight = new Semaphore(64);
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        for (int k = 0; k < o.keys && failures.isEmpty(); k++) {
            inFlight.acquire();
            session.executeAsync(SimpleStatement.newInstance(insert, k, "value " + k)
                            .setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM)
                            .setIdempotent(true))
                    .whenComplete((rs, error) -> {
                        if (error != null) {
                            failures.add(error);
                        }
                        inFlight.release();
                    });
        }
        inFlight.acquire(64);
        if (!failures.isEmpty()) {
            throw new IllegalStateException("writing the demo's rows failed: " + failures.peek(), failures.peek());
        }
        return String.format(
                Locale.ROOT,
                "created (if absent): keyspace %s (NetworkTopologyStrategy, '%s': %d), table %s.%s; wrote %d rows",
                o.keyspace,
                dc,
                rf,
                o.keyspace,
                o.table,
                o.keys);
    }

    private static String address(Node node) {
        SocketAddress a = node.getEndPoint().resolve();
        if (a instanceof InetSocketAddress inet) {
            return inet.getHostString() + ":" + inet.getPort();
        }
        return String.valueOf(a);
    }
}

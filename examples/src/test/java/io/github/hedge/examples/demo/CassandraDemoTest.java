package io.github.hedge.examples.demo;

import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.rows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.when;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import com.datastax.oss.protocol.internal.Frame;
import com.datastax.oss.protocol.internal.ProtocolConstants;
import com.datastax.oss.protocol.internal.request.Query;
import com.datastax.oss.protocol.internal.response.result.ColumnSpec;
import com.datastax.oss.protocol.internal.response.result.DefaultRows;
import com.datastax.oss.protocol.internal.response.result.RawType;
import com.datastax.oss.protocol.internal.response.result.RowsMetadata;
import com.datastax.oss.simulacron.common.cluster.AbstractNode;
import com.datastax.oss.simulacron.common.cluster.ClusterSpec;
import com.datastax.oss.simulacron.common.cluster.QueryLog;
import com.datastax.oss.simulacron.common.stubbing.Action;
import com.datastax.oss.simulacron.common.stubbing.MessageResponseAction;
import com.datastax.oss.simulacron.common.stubbing.StubMapping;
import com.datastax.oss.simulacron.server.BoundCluster;
import com.datastax.oss.simulacron.server.BoundNode;
import com.datastax.oss.simulacron.server.Inet4Resolver;
import com.datastax.oss.simulacron.server.Server;
import io.netty.util.HashedWheelTimer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the demo with {@code --cassandra} against a simulated 3-node cluster (Simulacron, the real
 * driver) and checks its table, what the nodes received and the HTML report. The first node answers
 * the demo's read 200 ms late (a slow node, which latency-aware ordering and the driver's own
 * slow-replica avoidance learn to skip); each of the other two answers {@value #TAIL_MS} ms late for
 * its own 3% of the keys (a per-request tail no ordering can learn: about 3% of the calls start on a
 * replica that is slow for them, below the p96 delay's 4%, so a hedge has something to rescue and the
 * count of hedges does not rest on the machine's noise). Timings are never asserted: the machine may
 * be loaded.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CassandraDemoTest {
    private static final String SELECT = "SELECT v FROM hedge_demo.kv WHERE k = ?";

    @TempDir
    static Path dir;

    private static HashedWheelTimer timer;
    private static Server server;
    private static BoundCluster cluster;
    private static String slowNode;
    private static HedgeDemo.Summary summary;
    private static String console;
    /** every query the nodes received during the demo's run */
    private static List<String> received;

    @BeforeAll
    static void runShortDemoAgainstASimulatedCluster() throws Exception {
        // Simulacron's default 100 ms timer tick would turn the primed 200 ms into ~290 ms
        timer = new HashedWheelTimer(1, TimeUnit.MILLISECONDS);
        // 127.0.43.x: a loopback range no other module's tests use
        server = Server.builder()
                .withTimer(timer)
                .withAddressResolver(new Inet4Resolver(new byte[] {127, 0, 43, 1}, 9042))
                .build();
        cluster = server.register(ClusterSpec.builder().withNodes(3));
        // the keyspace in the schema, so the driver's token map knows each key's replicas
        Map<String, String> replication = new LinkedHashMap<>();
        replication.put("class", "org.apache.cassandra.locator.SimpleStrategy");
        replication.put("replication_factor", "3");
        cluster.prime(when("SELECT * FROM system_schema.keyspaces")
                .then(rows().row("keyspace_name", "hedge_demo", "durable_writes", true, "replication", replication)
                        .columnTypes(
                                "keyspace_name",
                                "varchar",
                                "durable_writes",
                                "boolean",
                                "replication",
                                "map<varchar,varchar>")));
        List<BoundNode> nodes = new ArrayList<>(cluster.getNodes());
        for (int i = 0; i < nodes.size(); i++) {
            nodes.get(i).getStubStore().register(new DemoRead(i));
        }
        InetSocketAddress slow = nodes.get(0).inetSocketAddress();
        slowNode = slow.getHostString() + ":" + slow.getPort();
        cluster.clearLogs();

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            summary = HedgeDemo.run(
                    new String[] {
                        "--cassandra",
                        contactPoints(),
                        "--seconds",
                        "6",
                        "--rate",
                        "150",
                        "--warmup",
                        "1.5",
                        "--jvm-warmup",
                        "0.5",
                        "--no-progress",
                        "--report",
                        dir.resolve("cassandra.html").toString()
                    },
                    out);
        }
        console = bytes.toString(StandardCharsets.UTF_8);
        received = queries();
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (timer != null) {
            timer.stop();
        }
    }

    @Test
    void should_print_one_row_per_mode_when_the_demo_runs_against_a_cluster() {
        assertThat(summary.phases())
                .extracting(PhaseResult::label)
                .containsExactly("no hedging", "hedge-cassandra", "driver speculative");
        assertThat(console)
                .contains("p50", "p90", "p99", "p99.9", "max", "extra load", "hedges won")
                .contains("Cassandra cluster at", "local datacenter dc1 (3 nodes)")
                .contains("ConstantSpeculativeExecutionPolicy, max-executions 3, delay")
                .contains("HTML report: " + summary.report());
        for (PhaseResult r : summary.phases()) {
            assertThat(r.calls()).as(r.label()).isGreaterThan(100);
            assertThat(r.successes()).as(r.label()).isGreaterThan(0);
            assertThat(console).contains(r.label());
            // every measured answer came from one of the three nodes
            assertThat(summary.cassandra().answersByNode().get(r.label()).values().stream()
                            .mapToLong(Long::longValue)
                            .sum())
                    .as(r.label())
                    .isEqualTo(r.successes());
        }
        assertThat(summary.cassandra().nodes()).hasSize(3).contains(slowNode);
    }

    @Test
    void should_send_hedges_to_nodes_the_call_had_not_tried_when_hedging() {
        PhaseResult none = summary.phases().get(0);
        PhaseResult hedge = summary.phases().get(1);
        PhaseResult driver = summary.phases().get(2);
        assertThat(none.attempts()).isEqualTo(none.calls());
        assertThat(none.hedgesWon()).isZero();

        HedgeDemo.Summary s = summary;
        assertThat(s.cassandra().hedgeCassandraHedges()).isPositive();
        assertThat(s.cassandra().hedgeCassandraHedgesToUntriedNodes())
                .isEqualTo(s.cassandra().hedgeCassandraHedges());
        assertThat(hedge.attempts() - hedge.calls()).isEqualTo(s.cassandra().hedgeCassandraHedges());
        // a 5% budget; a generous margin for the budget's burst at a short run
        assertThat(hedge.extraLoad()).isLessThanOrEqualTo(0.10);
        assertThat(hedge.hedgesWon()).isLessThanOrEqualTo(hedge.attempts() - hedge.calls());
        // the calls that started on a replica slow for their key were answered by the hedge
        assertThat(hedge.hedgesWon()).isPositive();

        // the driver's speculative executions go to the next node of the query plan, never the same
        // one; when the slow node was the primary, another node's answer won
        assertThat(driver.attempts()).isGreaterThan(driver.calls());
        assertThat(driver.hedgesWon()).isPositive();
        assertThat(console).contains("to a node the call had not tried");

        // the nodes received at least every measured execution (warm-ups and losers come on top)
        long selects = received.stream().filter(SELECT::equals).count();
        long measured =
                summary.phases().stream().mapToLong(PhaseResult::attempts).sum();
        assertThat(selects).isGreaterThanOrEqualTo(measured);
    }

    @Test
    void should_run_every_mode_unrecorded_on_its_own_session_first_when_the_jvm_warms_up() {
        assertThat(console).contains("warming the JVM: each mode 0.5 s on a session of its own, not recorded");
        // the nodes count every read: the measured executions, each mode's 1.5 s phase warm-up and
        // the JVM warm-up's three modes of 0.5 s each, at 150 reads/s, none of them in a measured row
        long selects = received.stream().filter(SELECT::equals).count();
        long measured =
                summary.phases().stream().mapToLong(PhaseResult::attempts).sum();
        long phaseWarmups = 3 * 225;
        long jvmWarmup = 3 * 75;
        assertThat(selects).isGreaterThanOrEqualTo(measured + (phaseWarmups + jvmWarmup) * 9 / 10);
    }

    @Test
    void should_write_nothing_to_the_cluster_when_create_schema_is_not_passed() {
        assertThat(received).isNotEmpty();
        for (String q : received) {
            String first = q.trim().split("\\s+")[0].toUpperCase(java.util.Locale.ROOT);
            assertThat(first).as(q).isNotIn("CREATE", "INSERT", "UPDATE", "DELETE", "ALTER", "DROP", "TRUNCATE");
        }
    }

    @Test
    void should_draw_both_charts_when_chromium_renders_the_report() throws Exception {
        String html = Files.readString(summary.report());
        assertThat(html).contains("<table id=\"summary\">", "hedge-cassandra", "driver speculative");
        Chromium.assumeInstalled();
        Chromium.assertChartsDrawn(summary.report(), dir.resolve("chromium-profile"), 3);
    }

    @Test
    void should_create_the_keyspace_with_rf_3_and_seed_the_rows_when_create_schema_is_passed() throws Exception {
        cluster.clearLogs();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            HedgeDemo.run(
                    new String[] {
                        "--cassandra",
                        contactPoints(),
                        "--create-schema",
                        "--keys",
                        "20",
                        "--modes",
                        "none",
                        "--seconds",
                        "0.5",
                        "--warmup",
                        "0",
                        "--jvm-warmup",
                        "0",
                        "--rate",
                        "50",
                        "--no-progress",
                        "--report",
                        dir.resolve("create.html").toString()
                    },
                    out);
        }
        List<String> queries = queries();
        assertThat(queries)
                .contains(
                        "CREATE KEYSPACE IF NOT EXISTS hedge_demo WITH replication = {'class':"
                                + " 'NetworkTopologyStrategy', 'dc1': 3}",
                        "CREATE TABLE IF NOT EXISTS hedge_demo.kv (k int PRIMARY KEY, v text)");
        assertThat(queries.stream().filter(q -> q.startsWith("INSERT INTO hedge_demo.kv")))
                .hasSize(20);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("wrote 20 rows");
    }

    @Test
    void should_read_the_given_statement_as_is_when_cql_is_passed() throws Exception {
        String cql = "SELECT v FROM hedge_demo.kv WHERE k = 1";
        cluster.prime(when(cql).then(rows().row("v", "one").columnTypes("v", "varchar")));
        cluster.clearLogs();
        HedgeDemo.Summary s;
        try (PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)) {
            s = HedgeDemo.run(
                    new String[] {
                        "--cassandra",
                        contactPoints(),
                        "--cql",
                        cql,
                        "--modes",
                        "hedge",
                        "--seconds",
                        "1",
                        "--warmup",
                        "0",
                        "--jvm-warmup",
                        "0",
                        "--rate",
                        "50",
                        "--no-progress",
                        "--report",
                        dir.resolve("cql.html").toString()
                    },
                    out);
        }
        assertThat(s.phases()).singleElement().satisfies(r -> {
            assertThat(r.successes()).isGreaterThan(20);
            assertThat(r.errors()).isZero();
        });
        assertThat(queries().stream().filter(cql::equals).count())
                .isGreaterThanOrEqualTo(s.phases().get(0).attempts());
        assertThat(queries()).noneMatch(q -> q.startsWith("SELECT v FROM hedge_demo.kv WHERE k = ?"));
    }

    @Test
    void should_name_the_option_its_range_and_the_value_when_a_cassandra_option_is_invalid() {
        assertThatThrownBy(() -> HedgeDemo.Options.parse(new String[] {"--keyspace", "ks"}))
                .hasMessage("--keyspace needs --cassandra host:port");
        assertThatThrownBy(() -> HedgeDemo.Options.parse(
                        new String[] {"--cassandra", "127.0.0.1", "--cql", "INSERT INTO ks.t (k) VALUES (1)"}))
                .hasMessage("--cql must be a SELECT (only a read is safe to send twice), was \"INSERT INTO ks.t (k)"
                        + " VALUES (1)\"");
        assertThatThrownBy(
                        () -> HedgeDemo.Options.parse(new String[] {"--cassandra", "h:9042", "--consistency", "ANY"}))
                .hasMessageStartingWith("--consistency must be a read consistency level, one of [ONE,")
                .hasMessageEndingWith("was \"ANY\"");
        assertThatThrownBy(() -> HedgeDemo.Options.parse(new String[] {"--cassandra", "h", "--table", "Kv"}))
                .hasMessageContaining("--table must be a lower-case CQL name");
        assertThatThrownBy(() -> HedgeDemo.Options.parse(new String[] {"--cassandra", "h:x"}))
                .hasMessage("--cassandra port must be a number in [1, 65535], was \"x\"");
        assertThat(HedgeDemo.Options.parse(new String[] {"--cassandra", "10.0.0.1,10.0.0.2:9043"}).cassandra)
                .extracting(InetSocketAddress::getPort)
                .containsExactly(9042, 9043);
    }

    private static String contactPoints() {
        return cluster.getNodes().stream()
                .map(n -> n.inetSocketAddress().getHostString() + ":"
                        + n.inetSocketAddress().getPort())
                .collect(Collectors.joining(","));
    }

    /** Milliseconds a fast node takes to answer the read for one of its slow keys. */
    static final int TAIL_MS = 40;

    /** Each fast node is slow for the keys with {@code k % TAIL_MODULUS == its index}: 3% of the keys. */
    static final int TAIL_MODULUS = 33;

    /**
     * The demo's read on node {@code index}: one row ({@code v = 'value'}), after 200 ms on node 0,
     * after {@link #TAIL_MS} on node 1 or 2 for the keys with {@code k % TAIL_MODULUS == index}, at once
     * otherwise. (Simulacron's primes match bound values by name only, so a stub reads the key.)
     */
    private static final class DemoRead extends StubMapping {
        private final int index;

        DemoRead(int index) {
            this.index = index;
        }

        @Override
        public boolean matches(Frame frame) {
            return frame.message instanceof Query q && SELECT.equals(q.query);
        }

        @Override
        public List<Action> getActions(AbstractNode node, Frame frame) {
            List<ByteBuffer> values = ((Query) frame.message).options.positionalValues;
            int k = values.isEmpty() ? -1 : values.get(0).getInt(values.get(0).position());
            long delay = index == 0 ? 200 : Math.floorMod(k, TAIL_MODULUS) == index ? TAIL_MS : 0;
            ColumnSpec v = new ColumnSpec(
                    "hedge_demo", "kv", "v", 0, RawType.PRIMITIVES.get(ProtocolConstants.DataType.VARCHAR));
            Queue<List<ByteBuffer>> data = new ArrayDeque<>();
            data.add(List.of(TypeCodecs.TEXT.encode("value", ProtocolVersion.DEFAULT)));
            return List.of(new MessageResponseAction(
                    new DefaultRows(new RowsMetadata(List.of(v), null, null, null), data), delay));
        }
    }

    private static List<String> queries() {
        List<String> out = new ArrayList<>();
        for (BoundNode n : cluster.getNodes()) {
            for (QueryLog log : n.getLogs().getQueryLogs()) {
                if (log.getQuery() != null) {
                    out.add(log.getQuery());
                }
            }
        }
        return out;
    }
}

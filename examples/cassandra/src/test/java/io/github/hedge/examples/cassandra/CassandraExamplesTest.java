package io.github.hedge.examples.cassandra;

import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.rows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.when;
import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.simulacron.common.cluster.ClusterSpec;
import com.datastax.oss.simulacron.server.BoundCluster;
import com.datastax.oss.simulacron.server.BoundNode;
import com.datastax.oss.simulacron.server.Inet4Resolver;
import com.datastax.oss.simulacron.server.Server;
import io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.netty.util.HashedWheelTimer;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Both examples against a simulated 3-node cluster (Simulacron) whose first node answers 200 ms late. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CassandraExamplesTest {
    private static final String SELECT = "SELECT v FROM ks.t WHERE k = ?";
    private static HashedWheelTimer timer;
    private static Server server;
    private static BoundCluster cluster;

    @BeforeAll
    static void cluster() {
        timer = new HashedWheelTimer(1, TimeUnit.MILLISECONDS);
        // 127.0.42.x: its own loopback range, so other Simulacron clusters on this machine cannot collide with it
        server = Server.builder()
                .withTimer(timer)
                .withAddressResolver(new Inet4Resolver(new byte[] {127, 0, 42, 1}, 9042))
                .build();
        cluster = server.register(ClusterSpec.builder().withNodes(3));
        Map<String, String> replication = new LinkedHashMap<>();
        replication.put("class", "org.apache.cassandra.locator.SimpleStrategy");
        replication.put("replication_factor", "3");
        cluster.prime(when("SELECT * FROM system_schema.keyspaces")
                .then(rows().row("keyspace_name", "ks", "durable_writes", true, "replication", replication)
                        .columnTypes(
                                "keyspace_name",
                                "varchar",
                                "durable_writes",
                                "boolean",
                                "replication",
                                "map<varchar,varchar>")));
        List<BoundNode> nodes = new ArrayList<>(cluster.getNodes());
        for (int i = 0; i < nodes.size(); i++) {
            nodes.get(i)
                    .prime(when(SELECT)
                            .then(rows().row("v", "value").columnTypes("v", "varchar"))
                            .delay(i == 0 ? 200 : 0, TimeUnit.MILLISECONDS));
        }
    }

    @AfterAll
    static void close() throws Exception {
        server.close();
        timer.stop();
    }

    private static List<InetSocketAddress> contactPoints() {
        List<InetSocketAddress> out = new ArrayList<>();
        cluster.getNodes().forEach(n -> out.add(n.inetSocketAddress()));
        return out;
    }

    /** @return executions of the example's SELECT that the nodes received, all nodes together */
    private static long selectsServed() {
        return cluster.getNodes().stream()
                .mapToLong(n -> n.getLogs().getQueryLogs().stream()
                        .filter(l -> SELECT.equals(l.getQuery()))
                        .count())
                .sum();
    }

    @Test
    void should_answer_every_read_with_hedges_that_win_within_the_budget_when_one_node_is_slow() {
        cluster.clearLogs();
        try (HedgedCqlSession session = WrappedSessionExample.connect(contactPoints(), "dc1")) {
            for (int k = 0; k < 100; k++) {
                ResultSet rs = WrappedSessionExample.read(session, k);
                assertThat(rs.one().getString("v")).isEqualTo("value");
            }
            var stats = session.executor().stats();
            assertThat(stats.successes()).isEqualTo(100);
            // a read whose coordinator is the node 200 ms late is answered by a hedge to another
            assertThat(stats.hedgesWon()).as("hedges won").isPositive();
            // the budget (5% of calls, after its 20 cold-start tokens) bounds the hedges
            assertThat(stats.hedgesSent()).isLessThanOrEqualTo(20 + 5);
            // counted at the nodes: every read, and every hedge that won, reached one
            assertThat(selectsServed()).isBetween(100 + stats.hedgesWon(), stats.attempts());
        }
    }

    @Test
    void should_speculate_within_the_budget_when_the_policies_come_from_configuration() {
        cluster.clearLogs();
        try (CqlSession session = DriverConfigExample.connect(contactPoints(), "dc1")) {
            assertThat(session.getContext().getSpeculativeExecutionPolicy("default"))
                    .isInstanceOf(HedgeSpeculativeExecutionPolicy.class);
            long speculative = 0;
            for (int k = 0; k < 100; k++) {
                ResultSet rs = WrappedSessionExample.read(session, k);
                assertThat(rs.one().getString("v")).isEqualTo("value");
                speculative += rs.getExecutionInfo().getSpeculativeExecutionCount();
            }
            // reads that the slow node coordinates are speculated on, within the budget: the 20
            // cold-start tokens and 5% of 100 requests
            assertThat(speculative).isBetween(1L, 20L + 5);
            // counted at the nodes: each read and each speculative execution the driver sent, within
            // the same budget. Not bounded by the driver's count: an execution whose timer fires as
            // the read completes is sent but may be missing from that read's ExecutionInfo
            assertThat(selectsServed()).isBetween(100L, 100L + 20 + 5);
            assertThat(session.getContext()
                            .getConfig()
                            .getDefaultProfile()
                            .getInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX))
                    .isEqualTo(2);
        }
    }
}

package io.github.hedge.benchmarks.cassandra;

import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.noRows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.rows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.when;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import com.datastax.oss.simulacron.common.cluster.ClusterSpec;
import com.datastax.oss.simulacron.common.cluster.QueryLog;
import com.datastax.oss.simulacron.server.BoundCluster;
import com.datastax.oss.simulacron.server.BoundNode;
import com.datastax.oss.simulacron.server.Server;
import io.netty.util.HashedWheelTimer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * A simulated cluster on loopback (Simulacron, dc1) whose schema has keyspace {@code ks}
 * (SimpleStrategy, RF 3), so the driver knows each statement's replicas. Not thread-safe to
 * reconfigure; sessions may run concurrently.
 */
final class SimulatedCluster implements AutoCloseable {
    static final String INSERT = "INSERT INTO ks.tweet (id, timeline, data) VALUES (?, 'me', ?)";

    // a 1 ms tick: Simulacron's default 100 ms tick would add up to 100 ms to every primed delay
    private final HashedWheelTimer timer = new HashedWheelTimer(1, TimeUnit.MILLISECONDS);
    private final Server server;
    private final BoundCluster cluster;

    SimulatedCluster(int nodes) {
        // each cluster on its own random 127.x.y.0/24 addresses: Simulacron's default 127.0.0.1-3:9042
        // collides with any other simulated or real node on this machine (other builds, a
        // previous test class whose ports are still being released)
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        byte[] start = {127, (byte) random.nextInt(100, 200), (byte) random.nextInt(1, 255), 1};
        server = Server.builder()
                .withTimer(timer)
                .withAddressResolver(new com.datastax.oss.simulacron.server.Inet4Resolver(start, 9042))
                .build();
        cluster = server.register(ClusterSpec.builder().withNodes(nodes));
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
    }

    List<BoundNode> nodes() {
        return new ArrayList<>(cluster.getNodes());
    }

    /** Every node answers {@code query} after {@code delaysMs[i]} ms (0: at once). */
    void delays(String query, long... delaysMs) {
        List<BoundNode> nodes = nodes();
        for (int i = 0; i < nodes.size(); i++) {
            BoundNode n = nodes.get(i);
            n.clearPrimes(false);
            long d = i < delaysMs.length ? delaysMs[i] : 0;
            n.prime(
                    d == 0
                            ? when(query).then(noRows())
                            : when(query).then(noRows()).delay(d, TimeUnit.MILLISECONDS));
        }
    }

    /** @return executions of {@code query} each node received since the last {@link #clearLogs()} */
    long[] received(String query) {
        List<BoundNode> nodes = nodes();
        long[] counts = new long[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            for (QueryLog log : nodes.get(i).getLogs().getQueryLogs()) {
                if (query.equals(log.getQuery())) {
                    counts[i]++;
                }
            }
        }
        return counts;
    }

    void clearLogs() {
        cluster.clearLogs();
    }

    CqlSession session(UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> config) {
        ProgrammaticDriverConfigLoaderBuilder b = DriverConfigLoader.programmaticBuilder()
                .withString(DefaultDriverOption.LOAD_BALANCING_LOCAL_DATACENTER, "dc1")
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10));
        List<InetSocketAddress> contacts = new ArrayList<>();
        for (BoundNode n : nodes()) {
            contacts.add(n.inetSocketAddress());
        }
        return CqlSession.builder()
                .addContactPoints(contacts)
                .withConfigLoader(config.apply(b).build())
                .build();
    }

    static SimpleStatement insert(int id, int data) {
        return SimpleStatement.newInstance(INSERT, id, data)
                .setRoutingKeyspace("ks")
                .setRoutingKey(TypeCodecs.INT.encode(id, ProtocolVersion.DEFAULT))
                .setIdempotent(true);
    }

    @Override
    public void close() throws Exception {
        try {
            server.close();
        } finally {
            timer.stop();
        }
    }
}

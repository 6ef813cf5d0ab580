package io.github.hedge.examples.spring;

import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.rows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.when;

import com.datastax.oss.simulacron.common.cluster.ClusterSpec;
import com.datastax.oss.simulacron.common.cluster.QueryLog;
import com.datastax.oss.simulacron.server.BoundCluster;
import com.datastax.oss.simulacron.server.BoundNode;
import com.datastax.oss.simulacron.server.Inet4Resolver;
import com.datastax.oss.simulacron.server.Server;
import io.netty.util.HashedWheelTimer;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A simulated 3-node Cassandra cluster (Simulacron, dc1) holding keyspace {@code shop} (RF 3) and
 * answering the product query with one product, "teapot".
 */
final class SimulatedShopCassandra implements AutoCloseable {
    // Simulacron's default 100 ms tick would stretch primed delays; its thread is not stopped by close()
    private final HashedWheelTimer timer = new HashedWheelTimer(1, TimeUnit.MILLISECONDS);
    private final Server server;
    private final BoundCluster cluster;

    SimulatedShopCassandra() {
        // a random 127.250-254.y.0/24 of its own: Simulacron's default 127.0.0.1-3:9042 collides with any
        // other node on the machine, and the other test modules take 127.0.x (hedge-cassandra-it,
        // examples/cassandra), 127.100-199 (hedge-cassandra, hedge-benchmarks) and 127.200-249
        // (hedge-spring-boot-autoconfigure)
        ThreadLocalRandom random = ThreadLocalRandom.current();
        byte[] start = {127, (byte) random.nextInt(250, 255), (byte) random.nextInt(1, 255), 1};
        server = Server.builder()
                .withTimer(timer)
                .withAddressResolver(new Inet4Resolver(start, 9042))
                .build();
        cluster = server.register(ClusterSpec.builder().withNodes(3));
        Map<String, String> replication = new LinkedHashMap<>();
        replication.put("class", "org.apache.cassandra.locator.SimpleStrategy");
        replication.put("replication_factor", "3");
        cluster.prime(when("SELECT * FROM system_schema.keyspaces")
                .then(rows().row("keyspace_name", "shop", "durable_writes", true, "replication", replication)
                        .columnTypes(
                                "keyspace_name",
                                "varchar",
                                "durable_writes",
                                "boolean",
                                "replication",
                                "map<varchar,varchar>")));
        cluster.prime(when(ProductRepository.SELECT_NAME)
                .then(rows().row("name", "teapot").columnTypes("name", "varchar")));
    }

    /** @return {@code host:port} of the first node, for spring.cassandra.contact-points */
    String contactPoint() {
        InetSocketAddress a = cluster.getNodes().iterator().next().inetSocketAddress();
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    /** @return how many times the cluster received the product query */
    long productQueries() {
        long n = 0;
        for (BoundNode node : cluster.getNodes()) {
            for (QueryLog log : node.getLogs().getQueryLogs()) {
                if (ProductRepository.SELECT_NAME.equals(log.getQuery())) {
                    n++;
                }
            }
        }
        return n;
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

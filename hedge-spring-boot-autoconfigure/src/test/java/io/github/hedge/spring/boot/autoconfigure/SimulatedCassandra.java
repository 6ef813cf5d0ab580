package io.github.hedge.spring.boot.autoconfigure;

import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.noRows;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/** A simulated 3-node cluster (Simulacron, dc1) with keyspace {@code ks} (RF 3) in its schema. */
final class SimulatedCassandra implements AutoCloseable {
    static final String SELECT = "SELECT v FROM ks.t WHERE k = 1";
    static final String INSERT = "INSERT INTO ks.t (k, v) VALUES (1, 2)";

    // Simulacron's default 100 ms tick would stretch primed delays; its thread is not stopped by close()
    private final HashedWheelTimer timer = new HashedWheelTimer(1, TimeUnit.MILLISECONDS);
    private final Server server;
    private final BoundCluster cluster;

    SimulatedCassandra() {
        // its own random 127.x.y.0/24 addresses: Simulacron's default 127.0.0.1-3:9042 collides with any
        // other simulated or real node on the machine (other builds, hedge-cassandra's tests use 127.100-199)
        ThreadLocalRandom random = ThreadLocalRandom.current();
        byte[] start = {127, (byte) random.nextInt(200, 250), (byte) random.nextInt(1, 255), 1};
        server = Server.builder()
                .withTimer(timer)
                .withAddressResolver(new Inet4Resolver(start, 9042))
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
        for (int i = 0; i < 3; i++) {
            heal(i);
        }
    }

    /** @return {@code host:port} of the first node, for spring.cassandra.contact-points */
    String contactPoint() {
        InetSocketAddress a = node(0).inetSocketAddress();
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    BoundNode node(int i) {
        return new ArrayList<>(cluster.getNodes()).get(i);
    }

    /** Primes node i to answer the test queries after {@code delayMs}. */
    void slow(int i, long delayMs) {
        node(i).clearPrimes(false);
        node(i).prime(when(SELECT).then(noRows()).delay(delayMs, TimeUnit.MILLISECONDS));
        node(i).prime(when(INSERT).then(noRows()).delay(delayMs, TimeUnit.MILLISECONDS));
    }

    /** Primes node i to answer {@code query}, one of the test queries, after {@code delayMs}, and the other at once. */
    void slow(int i, String query, long delayMs) {
        node(i).clearPrimes(false);
        for (String q : List.of(SELECT, INSERT)) {
            node(i).prime(when(q).then(noRows()).delay(q.equals(query) ? delayMs : 0, TimeUnit.MILLISECONDS));
        }
    }

    /** @return {@code host:port} of node i, as the wrapped session reports its targets */
    String address(int i) {
        InetSocketAddress a = node(i).inetSocketAddress();
        return a.getHostString() + ":" + a.getPort();
    }

    /** Primes node i to answer at once. */
    void heal(int i) {
        node(i).clearPrimes(false);
        node(i).prime(when(SELECT).then(noRows()));
        node(i).prime(when(INSERT).then(noRows()));
    }

    /** @return how many times the cluster received {@code query} */
    long received(String query) {
        long n = 0;
        List<BoundNode> nodes = new ArrayList<>(cluster.getNodes());
        for (BoundNode node : nodes) {
            for (QueryLog log : node.getLogs().getQueryLogs()) {
                if (query.equals(log.getQuery())) {
                    n++;
                }
            }
        }
        return n;
    }

    /** @return how many times node i received {@code query} */
    long received(int i, String query) {
        return node(i).getLogs().getQueryLogs().stream()
                .filter(log -> query.equals(log.getQuery()))
                .count();
    }

    void clearLogs() {
        cluster.clearLogs();
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

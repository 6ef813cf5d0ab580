package io.github.hedge.cassandra;

import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.noRows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.rows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.when;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import com.datastax.oss.protocol.internal.Frame;
import com.datastax.oss.protocol.internal.Message;
import com.datastax.oss.protocol.internal.ProtocolConstants;
import com.datastax.oss.protocol.internal.request.Prepare;
import com.datastax.oss.protocol.internal.request.Query;
import com.datastax.oss.protocol.internal.request.query.QueryOptions;
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
import com.datastax.oss.simulacron.server.Server;
import io.netty.util.HashedWheelTimer;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * A simulated 3-node cluster (Simulacron, dc1) with keyspace {@code ks} (SimpleStrategy, RF 3) in
 * its schema, so the driver's token map knows the replicas. One per test class.
 */
final class SimulacronCluster implements AutoCloseable {
    static final String INSERT = "INSERT INTO ks.t (k, v) VALUES (?, ?)";
    static final String SELECT = "SELECT v FROM ks.t WHERE k = ?";
    /** Answered in two pages once {@link #primeTwoPages(long)} has primed it. */
    static final String PAGED = "SELECT v FROM ks.pages WHERE k = ?";

    /**
     * Requests a test sends when it needs the driver's shuffle to put at least 3 primaries on the slow
     * node (a third of them on average): at 45 the chance it puts 2 or fewer there is about 3e-6 (at
     * 30 it was 7e-4).
     */
    static final int REQUESTS_FOR_3_SLOW_PRIMARIES = 45;

    // Simulacron's default 100 ms timer tick would turn a primed 250 ms delay into ~290 ms
    private final HashedWheelTimer timer = new HashedWheelTimer(1, TimeUnit.MILLISECONDS);
    private final Server server;
    final BoundCluster cluster;

    SimulacronCluster(int nodes) {
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
        fast();
    }

    List<BoundNode> nodes() {
        return new ArrayList<>(cluster.getNodes());
    }

    BoundNode node(int i) {
        return nodes().get(i);
    }

    /** Primes every node to answer the test queries at once. */
    void fast() {
        for (int i = 0; i < nodes().size(); i++) {
            heal(i);
        }
    }

    /** Primes one node to answer {@code query} after {@code delayMs}. */
    void slow(int i, String query, long delayMs) {
        node(i).clearPrimes(false);
        node(i).prime(when(query).then(noRows()).delay(delayMs, TimeUnit.MILLISECONDS));
        if (!query.equals(INSERT)) {
            node(i).prime(when(INSERT).then(noRows()));
        }
        if (!query.equals(SELECT)) {
            node(i).prime(when(SELECT).then(noRows()));
        }
    }

    /**
     * Primes one node to answer {@link #SELECT} after {@code delayMs} when its key is a multiple of
     * {@code every}, and after {@code baseMs} otherwise (a node that stalls a share of its requests,
     * with its peers' median when they answer after {@code baseMs}). Cleared by {@link #heal(int)}.
     */
    void stallShare(int i, int every, long delayMs, long baseMs) {
        node(i).clearPrimes(false);
        node(i).getStubStore().register(new StallShare(every, delayMs));
        node(i).prime(when(INSERT).then(noRows()));
        node(i).prime(when(SELECT).then(noRows()).delay(baseMs, TimeUnit.MILLISECONDS));
    }

    private static final class StallShare extends StubMapping {
        private final int every;
        private final long delayMs;

        StallShare(int every, long delayMs) {
            this.every = every;
            this.delayMs = delayMs;
        }

        @Override
        public boolean matches(Frame frame) {
            if (!(frame.message instanceof Query) || !SELECT.equals(((Query) frame.message).query)) {
                return false;
            }
            List<ByteBuffer> values = ((Query) frame.message).options.positionalValues;
            if (values.size() != 1 || values.get(0) == null) {
                return false;
            }
            Integer k = TypeCodecs.INT.decode(values.get(0).duplicate(), ProtocolVersion.DEFAULT);
            return k != null && k % every == 0;
        }

        @Override
        public List<Action> getActions(AbstractNode node, Frame frame) {
            ColumnSpec v = new ColumnSpec("ks", "t", "v", 0, RawType.PRIMITIVES.get(ProtocolConstants.DataType.INT));
            return List.of(new MessageResponseAction(
                    new DefaultRows(new RowsMetadata(List.of(v), null, null, null), new ArrayDeque<>()), delayMs));
        }
    }

    /** Primes one node to answer the test queries at once. */
    void heal(int i) {
        node(i).clearPrimes(false);
        node(i).prime(when(INSERT).then(noRows()));
        node(i).prime(when(SELECT).then(noRows()));
    }

    /** @return how many times each node received {@code query}, in node order */
    long[] received(String query) {
        return received(query, message -> true);
    }

    /** @return how many messages about {@code query} that pass {@code kind} each node received, in node order */
    private long[] received(String query, Predicate<Message> kind) {
        List<BoundNode> nodes = nodes();
        long[] counts = new long[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            for (QueryLog log : nodes.get(i).getLogs().getQueryLogs()) {
                if (query.equals(log.getQuery()) && kind.test(log.getFrame().message)) {
                    counts[i]++;
                }
            }
        }
        return counts;
    }

    /**
     * One execution of a test query as a node received it.
     *
     * @param key the value of its first bound variable (the tests' key)
     * @param node the index of the node that received it
     * @param receivedAt when, as Simulacron logged it (ms)
     * @param laterPage whether it carried a paging state (a request for a page after the first)
     */
    record Reception(int key, int node, long receivedAt, boolean laterPage) {}

    /** @return every execution of {@code query} (QUERY messages) the nodes received, in order of reception */
    List<Reception> receptions(String query) {
        List<Reception> out = new ArrayList<>();
        List<BoundNode> nodes = nodes();
        for (int i = 0; i < nodes.size(); i++) {
            for (QueryLog log : nodes.get(i).getLogs().getQueryLogs()) {
                if (query.equals(log.getQuery()) && log.getFrame().message instanceof Query) {
                    QueryOptions options = ((Query) log.getFrame().message).options;
                    ByteBuffer key = options.positionalValues.get(0);
                    out.add(new Reception(
                            key.getInt(key.position()), i, log.getReceivedTimestamp(), options.pagingState != null));
                }
            }
        }
        out.sort(Comparator.comparingLong(Reception::receivedAt));
        return out;
    }

    /**
     * Which nodes received each execution of {@code query}, by key: for each key, the node indices
     * in the order the executions were received. A request's executions carry the same key, so the
     * first is its primary and the others its speculative executions or hedges (each sent at least
     * a delay after the first).
     *
     * @return node indices by key, in order of reception
     */
    Map<Integer, List<Integer>> receiversByKey(String query) {
        Map<Integer, List<Integer>> byKey = new TreeMap<>();
        for (Reception r : receptions(query)) {
            byKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.node());
        }
        return byKey;
    }

    /** @return how many PREPARE messages each node received for {@code query}, in node order */
    long[] prepared(String query) {
        return received(query, message -> message instanceof Prepare);
    }

    /**
     * Primes every node to answer {@link #PAGED} in two pages of one row each: {@code v = 1} with a
     * paging state, then, to the request carrying that paging state, {@code v = 2} after {@code
     * laterPageDelayMs}. (Simulacron's own primes cannot page.) Cleared by {@link #fast()} and
     * {@link #heal(int)}.
     */
    void primeTwoPages(long laterPageDelayMs) {
        for (BoundNode n : nodes()) {
            n.getStubStore().register(new TwoPages(laterPageDelayMs));
        }
    }

    private static final class TwoPages extends StubMapping {
        private final long laterPageDelayMs;

        TwoPages(long laterPageDelayMs) {
            this.laterPageDelayMs = laterPageDelayMs;
        }

        @Override
        public boolean matches(Frame frame) {
            return frame.message instanceof Query && PAGED.equals(((Query) frame.message).query);
        }

        @Override
        public List<Action> getActions(AbstractNode node, Frame frame) {
            boolean later = ((Query) frame.message).options.pagingState != null;
            ColumnSpec v =
                    new ColumnSpec("ks", "pages", "v", 0, RawType.PRIMITIVES.get(ProtocolConstants.DataType.INT));
            ByteBuffer next = later ? null : ByteBuffer.wrap(new byte[] {2});
            Queue<List<ByteBuffer>> data = new ArrayDeque<>();
            data.add(List.of(TypeCodecs.INT.encode(later ? 2 : 1, ProtocolVersion.DEFAULT)));
            return List.of(new MessageResponseAction(
                    new DefaultRows(new RowsMetadata(List.of(v), next, null, null), data),
                    later ? laterPageDelayMs : 0));
        }
    }

    /** @return receive timestamps (ms) of {@code query} on node i */
    List<Long> receivedAt(int i, String query) {
        List<Long> out = new ArrayList<>();
        for (QueryLog log : node(i).getLogs().getQueryLogs()) {
            if (query.equals(log.getQuery())) {
                out.add(log.getReceivedTimestamp());
            }
        }
        return out;
    }

    void clearLogs() {
        cluster.clearLogs();
    }

    /** @return the index of the simulated node the driver's node stands for */
    int indexOf(Node node) {
        InetSocketAddress a = (InetSocketAddress) node.getEndPoint().resolve();
        List<BoundNode> nodes = nodes();
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).inetSocketAddress().equals(a)) {
                return i;
            }
        }
        throw new IllegalArgumentException("unknown node " + node);
    }

    /** @return the driver's node that stands for simulated node {@code i} in {@code session} */
    Node nodeOf(CqlSession session, int i) {
        return session.getMetadata().getNodes().values().stream()
                .filter(n -> indexOf(n) == i)
                .findFirst()
                .orElseThrow();
    }

    CqlSession session() {
        return session(b -> b);
    }

    CqlSession session(UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> config) {
        ProgrammaticDriverConfigLoaderBuilder b = DriverConfigLoader.programmaticBuilder()
                .withString(DefaultDriverOption.LOAD_BALANCING_LOCAL_DATACENTER, "dc1")
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(5))
                .withDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(1))
                // the defaults' slow-replica avoidance would muddle what each test measures
                .withBoolean(DefaultDriverOption.LOAD_BALANCING_POLICY_SLOW_AVOIDANCE, false);
        List<InetSocketAddress> contacts = new ArrayList<>();
        for (BoundNode n : nodes()) {
            contacts.add(n.inetSocketAddress());
        }
        return CqlSession.builder()
                .addContactPoints(contacts)
                .withConfigLoader(config.apply(b).build())
                .build();
    }

    static SimpleStatement insert(int k) {
        return SimpleStatement.newInstance(INSERT, k, k)
                .setRoutingKeyspace("ks")
                .setRoutingKey(TypeCodecs.INT.encode(k, ProtocolVersion.DEFAULT));
    }

    static SimpleStatement paged(int k) {
        return SimpleStatement.newInstance(PAGED, k)
                .setRoutingKeyspace("ks")
                .setRoutingKey(TypeCodecs.INT.encode(k, ProtocolVersion.DEFAULT));
    }

    static SimpleStatement select(int k) {
        return SimpleStatement.newInstance(SELECT, k)
                .setRoutingKeyspace("ks")
                .setRoutingKey(TypeCodecs.INT.encode(k, ProtocolVersion.DEFAULT));
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            timer.stop(); // Server.close() leaves it running, and its thread is not a daemon
        }
    }
}

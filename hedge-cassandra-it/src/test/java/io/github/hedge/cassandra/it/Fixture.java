package io.github.hedge.cassandra.it;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import java.time.Duration;

/**
 * What every test class shares: the cluster, an unhedged admin session and the schema, created
 * once for the whole suite.
 */
final class Fixture {
    private static Fixture instance;

    final RealCluster cluster;
    final CqlSession admin;

    private Fixture() {
        cluster = RealCluster.get();
        admin = Mode.build(Mode.baseConfig());
        waitAllUp(admin);
        Workload.createSchema(admin);
    }

    static synchronized Fixture get() {
        if (instance == null) {
            instance = new Fixture();
        }
        return instance;
    }

    /** Waits (up to 2 minutes) until the session sees all three nodes up. */
    static void waitAllUp(CqlSession session) {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (true) {
            long up = session.getMetadata().getNodes().values().stream()
                    .map(Node::getState)
                    .filter(s -> s == NodeState.UP)
                    .count();
            if (up == 3 && session.getMetadata().getTokenMap().isPresent()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + up + " of 3 nodes up after 2 minutes: "
                        + session.getMetadata().getNodes().values());
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}

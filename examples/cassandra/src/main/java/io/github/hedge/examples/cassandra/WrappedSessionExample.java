package io.github.hedge.examples.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.HedgeConfig;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * The wrapped session: {@link HedgedCqlSession} is a {@link CqlSession} whose idempotent statements
 * are hedged across the statement's replicas by hedge itself (its adaptive delay, budget and
 * scheduler; losing executions are measured too). Everything else passes through to the driver.
 */
public final class WrappedSessionExample {
    private WrappedSessionExample() {}

    /**
     * @param contactPoints some nodes of the cluster
     * @param localDatacenter the driver's local datacenter
     * @return a hedged session; closing it closes the driver session
     */
    public static HedgedCqlSession connect(List<InetSocketAddress> contactPoints, String localDatacenter) {
        CqlSession driver = CqlSession.builder()
                .addContactPoints(contactPoints)
                .withLocalDatacenter(localDatacenter)
                .withConfigLoader(DriverConfigLoader.programmaticBuilder()
                        // statements are non-idempotent by default and would never be hedged
                        .withBoolean(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE, true)
                        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(5))
                        .build())
                .build();
        return HedgedCqlSession.wrap(
                driver,
                HedgeConfig.builder()
                        .maxExtraLoad(0.05) // hedge after the p95 of per-replica latency, at most 5% extra
                        .build());
    }

    /**
     * @param session the hedged session
     * @param key the partition key
     * @return the rows; the statement names its keyspace and routing key so its replicas are known
     */
    public static ResultSet read(CqlSession session, int key) {
        return session.execute(SimpleStatement.newInstance("SELECT v FROM ks.t WHERE k = ?", key)
                .setRoutingKeyspace("ks")
                .setRoutingKey(com.datastax.oss.driver.api.core.type.codec.TypeCodecs.INT.encode(
                        key, com.datastax.oss.driver.api.core.ProtocolVersion.DEFAULT))
                .setIdempotent(true));
    }
}

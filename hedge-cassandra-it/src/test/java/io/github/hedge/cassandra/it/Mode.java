package io.github.hedge.cassandra.it;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import io.github.hedge.cassandra.HedgeDriverOption;
import io.github.hedge.cassandra.HedgeLoadBalancingPolicy;
import io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy;
import io.github.hedge.cassandra.HedgedCqlSession;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/** How a run's client talks to the cluster: the four sessions every fault is run with. */
enum Mode {
    /** the driver as configured out of the box: no speculative executions */
    NONE("no hedging"),
    /** the driver's ConstantSpeculativeExecutionPolicy, its delay set for the same extra load as hedge */
    CONSTANT("driver constant policy"),
    /** {@code HedgedCqlSession.wrap(session)} with its defaults */
    HEDGE_WRAPPED("hedge (wrapped session)"),
    /** the configuration-only mode: HedgeLoadBalancingPolicy + HedgeSpeculativeExecutionPolicy */
    HEDGE_POLICY("hedge (driver policy)");

    final String label;

    /**
     * {@code -Dhedge.it.brokenHedging=true}: the wrapped session never hedges (at most one attempt
     * per call), a broken build that the stall's bound must catch.
     */
    static final boolean BROKEN_HEDGING = Boolean.getBoolean("hedge.it.brokenHedging");

    /**
     * The modes to run: those named in {@code -Dhedge.it.modes=NONE,HEDGE_WRAPPED}, or all of them
     * for {@code all} or no value. The module's pom leaves {@link #CONSTANT} out by default.
     */
    static java.util.List<Mode> selected() {
        String only = System.getProperty("hedge.it.modes", "");
        if (only.isBlank() || only.trim().equalsIgnoreCase("all")) {
            return java.util.List.of(values());
        }
        return java.util.Arrays.stream(only.split(","))
                .map(String::trim)
                .map(Mode::valueOf)
                .toList();
    }

    Mode(String label) {
        this.label = label;
    }

    /**
     * A new session for this mode.
     *
     * @param constantDelay the constant policy's delay (only for {@link #CONSTANT})
     */
    CqlSession open(Duration constantDelay) {
        ProgrammaticDriverConfigLoaderBuilder b = baseConfig();
        switch (this) {
            case CONSTANT ->
                b.withString(
                                DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS,
                                "ConstantSpeculativeExecutionPolicy")
                        .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 2)
                        .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, constantDelay);
            case HEDGE_POLICY ->
                b.withClass(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, HedgeLoadBalancingPolicy.class)
                        .withBoolean(HedgeDriverOption.LBP_LATENCY_AWARE, true)
                        .withClass(
                                DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS,
                                HedgeSpeculativeExecutionPolicy.class)
                        .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 2);
            default -> {}
        }
        CqlSession session = build(b);
        if (this != HEDGE_WRAPPED) {
            return session;
        }
        return BROKEN_HEDGING
                ? HedgedCqlSession.wrap(
                        session,
                        io.github.hedge.core.HedgeConfig.from(HedgedCqlSession.defaultConfig())
                                .maxAttempts(1)
                                .build())
                : HedgedCqlSession.wrap(session);
    }

    static CqlSession build(ProgrammaticDriverConfigLoaderBuilder b) {
        DriverConfigLoader loader = b.build();
        return CqlSession.builder()
                .addContactPoints(List.of(
                        new InetSocketAddress(RealCluster.clientIp(1), 9042),
                        new InetSocketAddress(RealCluster.clientIp(2), 9042)))
                .withLocalDatacenter("datacenter1")
                .withConfigLoader(loader)
                .build();
    }

    static ProgrammaticDriverConfigLoaderBuilder baseConfig() {
        return DriverConfigLoader.programmaticBuilder()
                // a 2 s stall must show as latency, not as client timeouts
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
                // protocol v4 without compression, so that the proxies can read every request's frame
                // (Executions); v5 would frame them in checksummed segments
                .withString(DefaultDriverOption.PROTOCOL_VERSION, "V4")
                .withString(DefaultDriverOption.PROTOCOL_COMPRESSION, "none")
                // schema changes at RF=3 take ~3 s here
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(20))
                .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(30))
                // speculative executions fire on the driver's timer: 1 ms, not 100 ms, for every mode
                .withDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(1))
                // a restarted node is back within a second of serving CQL
                .withString(DefaultDriverOption.RECONNECTION_POLICY_CLASS, "ConstantReconnectionPolicy")
                .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofSeconds(1))
                .withStringList(
                        DefaultDriverOption.METRICS_NODE_ENABLED, List.of("pool.orphaned-streams", "pool.in-flight"));
    }
}

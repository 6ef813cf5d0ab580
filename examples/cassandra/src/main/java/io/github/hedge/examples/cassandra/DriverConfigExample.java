package io.github.hedge.examples.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import io.github.hedge.cassandra.HedgeDriverOption;
import io.github.hedge.cassandra.HedgeLoadBalancingPolicy;
import io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * The configuration-only setup: no code change beyond the driver's config. The same in
 * {@code application.conf}:
 *
 * <pre>
 * datastax-java-driver {
 *   basic.load-balancing-policy.class = io.github.hedge.cassandra.HedgeLoadBalancingPolicy
 *   basic.request.default-idempotence = true
 *   advanced.speculative-execution-policy {
 *     class = io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy
 *     max-executions = 2
 *     hedge.max-extra-load = 0.05
 *   }
 *   advanced.netty.timer.tick-duration = 1 ms
 * }
 * </pre>
 */
public final class DriverConfigExample {
    private DriverConfigExample() {}

    /**
     * @param config the loader builder to add hedge's settings to
     * @return the same builder
     */
    public static ProgrammaticDriverConfigLoaderBuilder hedged(ProgrammaticDriverConfigLoaderBuilder config) {
        return config.withClass(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, HedgeLoadBalancingPolicy.class)
                .withClass(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, HedgeSpeculativeExecutionPolicy.class)
                .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 2)
                .withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, 0.05)
                // speculative executions fire on the driver's timer: the default 100 ms tick rounds every delay up
                .withDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(1))
                .withBoolean(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE, true);
    }

    /**
     * @param contactPoints some nodes of the cluster
     * @param localDatacenter the driver's local datacenter
     * @return a plain driver session whose speculative executions hedge times and budgets
     */
    public static CqlSession connect(List<InetSocketAddress> contactPoints, String localDatacenter) {
        return CqlSession.builder()
                .addContactPoints(contactPoints)
                .withLocalDatacenter(localDatacenter)
                .withConfigLoader(
                        hedged(DriverConfigLoader.programmaticBuilder()).build())
                .build();
    }
}

package io.github.hedge.grpc;

import io.github.hedge.grpc.internal.BalancerConfig;
import io.github.hedge.grpc.internal.HedgeLoadBalancer;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.NameResolver.ConfigOrError;
import io.grpc.Status;
import java.util.Map;

/**
 * The {@value #POLICY_NAME} load-balancing policy: a child policy ({@code round_robin} by default)
 * whose picker
 *
 * <ul>
 *   <li>never sends a hedge to a backend its call has already tried while an untried backend is
 *       ready (grpc-java itself keeps no such list: every attempt is picked independently);
 *   <li>keeps primaries off a backend whose recent median latency is more than {@code slowRatio}
 *       times the fastest peer's, for {@code windowSeconds} (then it is tried again), like
 *       Finagle's latency-aware balancers and Cassandra 3.x's {@code LatencyAwarePolicy};
 *   <li>keeps primaries off a backend that stalls a share of its calls, for {@code windowSeconds}:
 *       one whose share of primaries still unanswered when their call sent its first hedge is at
 *       least twice its peers' pooled share, by at least 4.5 binomial standard deviations (each
 *       side with {@code minSamples} primaries in the window).
 * </ul>
 *
 * <p>Registered with grpc's {@link io.grpc.LoadBalancerRegistry} through {@code
 * META-INF/services}; select it with {@code
 * ManagedChannelBuilder.defaultLoadBalancingPolicy("hedge_round_robin")} or in a service config:
 *
 * <pre>{@code
 * {"loadBalancingConfig": [{"hedge_round_robin": {
 *     "childPolicy": "round_robin", "slowRatio": 3.0, "minSamples": 20, "windowSeconds": 5}}]}
 * }</pre>
 *
 * <p>Every key is optional (defaults shown). The policy measures each backend from the streams it
 * places (successes, and attempts cancelled or timed out, whose elapsed time is a lower bound);
 * fast failures are not latency. Thread-safe, stateless: each channel gets its own balancer.
 */
public final class HedgeLoadBalancerProvider extends LoadBalancerProvider {
    /** The policy name: {@value}. */
    public static final String POLICY_NAME = BalancerConfig.POLICY_NAME;

    /** Creates the provider; grpc's registry does this through {@link java.util.ServiceLoader}. */
    public HedgeLoadBalancerProvider() {}

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public int getPriority() {
        return 5;
    }

    @Override
    public String getPolicyName() {
        return POLICY_NAME;
    }

    @Override
    public LoadBalancer newLoadBalancer(LoadBalancer.Helper helper) {
        return new HedgeLoadBalancer(helper);
    }

    @Override
    public ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> rawConfig) {
        try {
            return ConfigOrError.fromConfig(BalancerConfig.parse(rawConfig));
        } catch (IllegalArgumentException e) {
            return ConfigOrError.fromError(
                    Status.INVALID_ARGUMENT.withDescription(POLICY_NAME + ": " + e.getMessage()));
        }
    }
}

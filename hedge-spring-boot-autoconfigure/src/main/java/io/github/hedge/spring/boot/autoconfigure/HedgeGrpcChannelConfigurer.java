package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.grpc.HedgingClientInterceptor;
import io.grpc.ManagedChannelBuilder;
import java.util.Objects;
import java.util.Optional;

/**
 * Applies hedge to a gRPC channel the application builds: the {@link HedgingClientInterceptor} bean
 * and, unless {@code hedge.grpc.load-balancing=false}, the {@code hedge_round_robin} balancer (as
 * the default policy: a service config from the name resolver still wins, as in grpc-java).
 *
 * <pre>{@code
 * ManagedChannel channel = hedgeGrpc.configure(ManagedChannelBuilder.forTarget("dns:///catalog:443"))
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe; {@link #configure} may be called for any number of channels, which
 * then share the interceptor's budget.
 */
public final class HedgeGrpcChannelConfigurer {
    private final HedgingClientInterceptor interceptor;
    private final String loadBalancingPolicy;

    /**
     * @param interceptor the interceptor applied to every channel
     * @param loadBalancingPolicy the default load-balancing policy to set, or null to leave the builder's
     */
    public HedgeGrpcChannelConfigurer(HedgingClientInterceptor interceptor, String loadBalancingPolicy) {
        this.interceptor = Objects.requireNonNull(interceptor, "interceptor must not be null");
        this.loadBalancingPolicy = loadBalancingPolicy;
    }

    /**
     * @param builder a channel builder ({@code ManagedChannelBuilder.forTarget}, {@code NettyChannelBuilder}...)
     * @param <B> the builder's type
     * @return the same builder, with the interceptor and the balancer
     */
    public <B extends ManagedChannelBuilder<?>> B configure(B builder) {
        if (loadBalancingPolicy != null) {
            builder.defaultLoadBalancingPolicy(loadBalancingPolicy);
        }
        builder.intercept(interceptor);
        return builder;
    }

    /** @return the interceptor */
    public HedgingClientInterceptor interceptor() {
        return interceptor;
    }

    /** @return the default load-balancing policy set on channels, if any */
    public Optional<String> loadBalancingPolicy() {
        return Optional.ofNullable(loadBalancingPolicy);
    }
}

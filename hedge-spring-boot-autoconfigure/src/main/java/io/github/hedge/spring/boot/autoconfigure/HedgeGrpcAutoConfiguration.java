package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.observation.HedgeObservations;
import io.github.hedge.grpc.HedgeLoadBalancerProvider;
import io.github.hedge.grpc.HedgingClientInterceptor;
import io.github.hedge.grpc.MethodPolicy;
import io.grpc.ClientInterceptor;
import io.grpc.LoadBalancerRegistry;
import io.grpc.Status;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * With hedge-grpc on the class path: a {@link HedgingClientInterceptor} bean built from {@code
 * hedge.grpc.*} (defaults from the hedge instance {@code hedge.grpc.instance}, per-method policies
 * from {@code hedge.grpc.methods[pattern].*}) and a {@link HedgeGrpcChannelConfigurer} that applies
 * it, and the {@value HedgeLoadBalancerProvider#POLICY_NAME} balancer, to the channels the
 * application builds. The balancer is registered with grpc's default {@link LoadBalancerRegistry}
 * (it normally is already, through {@code META-INF/services}; a shaded jar may have lost that).
 *
 * <p>Both beans back off when the application defines its own; {@code hedge.grpc.enabled=false}
 * turns both off. The interceptor holds one budget: every channel it is applied to shares it.
 * Invalid settings fail the start through {@link InvalidHedgePropertyException}.
 */
@AutoConfiguration(after = HedgeAutoConfiguration.class)
@ConditionalOnClass({ClientInterceptor.class, HedgingClientInterceptor.class})
@ConditionalOnProperty(prefix = "hedge.grpc", name = "enabled", havingValue = "true", matchIfMissing = true)
public class HedgeGrpcAutoConfiguration {
    /** Created by Spring. */
    public HedgeGrpcAutoConfiguration() {}

    /**
     * The interceptor. Its per-method executors are created in {@link HedgeInstances}' registry,
     * named {@code <hedge.grpc.instance>:<full method name>} (e.g. {@code grpc:shop.Catalog/GetItem}),
     * so the {@code hedges} endpoint and the registry's meters list them; the instance {@code
     * hedge.grpc.instance} itself is their {@linkplain HedgeInstances#markTemplate template}.
     *
     * @param properties the {@code hedge.*} properties
     * @param instances the named instances, whose registry holds the per-method executors; without
     *     them the interceptor keeps a registry of its own
     * @return the interceptor
     * @throws InvalidHedgePropertyException naming the first invalid {@code hedge.grpc.*} or instance property
     */
    @Bean
    @ConditionalOnMissingBean
    public HedgingClientInterceptor hedgingClientInterceptor(
            HedgeProperties properties,
            ObjectProvider<HedgeInstances> instances,
            ObjectProvider<HedgeObservations> observations) {
        HedgeProperties.Grpc grpc = properties.getGrpc();
        String name = grpc.getInstance();
        SettingsResolver.Resolved resolved = SettingsResolver.resolve(
                name, properties.getDefaults(), properties.getInstances().get(name));
        HedgeInstanceSettings s = resolved.settings();
        HedgingClientInterceptor.Builder builder = HedgingClientInterceptor.builder()
                .defaults(SettingsResolver.toBuilder(name, resolved)
                        .callDecorator(observations.getIfAvailable())
                        .build());

        Integer bytes = grpc.getMaxHedgedRequestBytes();
        if (bytes == null || bytes < 0) {
            throw new InvalidHedgePropertyException(
                    "hedge.grpc.max-hedged-request-bytes", bytes, "in [0, " + Integer.MAX_VALUE + "]");
        }
        builder.maxHedgedRequestBytes(bytes);

        Set<Status.Code> codes = EnumSet.noneOf(Status.Code.class);
        for (String code : grpc.getNonFatalCodes()) {
            Status.Code c;
            try {
                c = Status.Code.valueOf(code.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                c = Status.Code.OK;
            }
            if (c == Status.Code.OK) {
                throw new InvalidHedgePropertyException(
                        "hedge.grpc.non-fatal-codes", code, "gRPC status code names other than OK");
            }
            codes.add(c);
        }
        builder.nonFatalCodes(codes);

        for (Map.Entry<String, HedgeProperties.GrpcMethod> e : grpc.getMethods().entrySet()) {
            builder.method(checkPattern(e.getKey()), methodPolicy(e.getKey(), e.getValue(), s));
        }
        HedgeInstances named = instances.getIfAvailable();
        if (named != null) {
            builder.registry(named.registry(), executorNamePrefix(name));
            named.markTemplate(name, "hedge.grpc");
        }
        return builder.build();
    }

    /**
     * @param interceptor the interceptor applied to every configured channel
     * @param properties the {@code hedge.*} properties
     * @return the configurer the application applies to its channel builders
     */
    @Bean
    @ConditionalOnMissingBean
    public HedgeGrpcChannelConfigurer hedgeGrpcChannelConfigurer(
            HedgingClientInterceptor interceptor, HedgeProperties properties) {
        LoadBalancerRegistry registry = LoadBalancerRegistry.getDefaultRegistry();
        if (registry.getProvider(HedgeLoadBalancerProvider.POLICY_NAME) == null) {
            registry.register(new HedgeLoadBalancerProvider());
        }
        return new HedgeGrpcChannelConfigurer(
                interceptor, properties.getGrpc().isLoadBalancing() ? HedgeLoadBalancerProvider.POLICY_NAME : null);
    }

    /**
     * @param instance {@code hedge.grpc.instance}
     * @return what the per-method executors' names start with: {@code grpc:} by default
     */
    static String executorNamePrefix(String instance) {
        return instance + ":";
    }

    private static String checkPattern(String pattern) {
        int slash = pattern.indexOf('/');
        boolean valid = pattern.equals("*")
                || (slash > 0
                        && slash == pattern.lastIndexOf('/')
                        && slash < pattern.length() - 1
                        && (pattern.indexOf('*') < 0
                                || pattern.endsWith("/*") && pattern.indexOf('*') == pattern.length() - 1));
        if (!valid) {
            throw new InvalidHedgePropertyException(
                    "hedge.grpc.methods", pattern, "keys \"pkg.Service/Method\", \"pkg.Service/*\" or \"*\"");
        }
        return pattern;
    }

    private static MethodPolicy methodPolicy(String pattern, HedgeProperties.GrpcMethod m, HedgeInstanceSettings s) {
        String prefix = "hedge.grpc.methods[" + pattern + "].";
        MethodPolicy.Builder b = MethodPolicy.builder();
        if (m.getEnabled() != null) {
            b.enabled(m.getEnabled());
        }
        if (m.getIdempotent() != null) {
            b.idempotent(m.getIdempotent());
        }
        if (m.getMaxAttempts() != null) {
            int n = m.getMaxAttempts();
            if (n < 1 || n > io.github.hedge.core.HedgeConfig.MAX_ATTEMPTS_LIMIT) {
                throw new InvalidHedgePropertyException(
                        prefix + "max-attempts",
                        n,
                        "in [1, " + io.github.hedge.core.HedgeConfig.MAX_ATTEMPTS_LIMIT + "]");
            }
            b.maxAttempts(n);
        }
        HedgeProperties.Delay d = m.getDelay();
        if (!d.getIncreasing().isEmpty()) {
            throw new InvalidHedgePropertyException(
                    prefix + "delay.increasing", "set", "delay.percentile or delay.fixed");
        }
        if (d.getPercentile() != null && d.getFixed() != null) {
            throw new InvalidHedgePropertyException(
                    prefix + "delay.*", "percentile and fixed", "one of percentile or fixed");
        }
        if (d.getPercentile() != null) {
            double p = d.getPercentile();
            if (!(p > 0.0 && p < 1.0)) {
                throw new InvalidHedgePropertyException(prefix + "delay.percentile", p, "in (0, 1)");
            }
            b.delay(DelayPolicy.percentile(p)
                    .min(s.minDelay())
                    .max(s.maxDelay())
                    .build());
        } else if (d.getFixed() != null) {
            Duration f = d.getFixed();
            if (f.isNegative() || f.compareTo(SettingsResolver.MAX_DURATION) > 0) {
                throw new InvalidHedgePropertyException(
                        prefix + "delay.fixed", SettingsResolver.fmt(f), "in [0, 365d]");
            }
            Duration clamped =
                    f.compareTo(s.minDelay()) < 0 ? s.minDelay() : f.compareTo(s.maxDelay()) > 0 ? s.maxDelay() : f;
            b.delay(DelayPolicy.fixed(clamped));
        }
        return b.build();
    }
}

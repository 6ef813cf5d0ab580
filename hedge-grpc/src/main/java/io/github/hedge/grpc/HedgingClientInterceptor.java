package io.github.hedge.grpc;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.grpc.internal.CallPlan;
import io.github.hedge.grpc.internal.HedgingCall;
import io.github.hedge.grpc.internal.StatusClassifier;
import io.github.hedge.grpc.internal.TooLargeCount;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hedges the <b>unary</b> calls of a grpc-java channel: attempt 1 starts as an ordinary {@link
 * ClientCall}; if it has not succeeded after the method's delay (by default the p96 of the method's
 * recent latency), another attempt starts, budget permitting, and so on up to {@code maxAttempts}.
 * The first attempt that ends with status OK wins: its headers, message and trailers reach the
 * application's listener exactly once. Response headers alone never commit a call, so a server
 * that sends its headers early is still hedged around (grpc-java's own {@code hedgingPolicy}
 * commits on headers). Losers are cancelled with {@link ClientCall#cancel}: the server sees
 * RST_STREAM.
 *
 * <ul>
 *   <li><b>Which calls.</b> Unary methods whose descriptor is safe or idempotent ({@code
 *       idempotency_level} in the .proto), or that a {@link MethodPolicy} declares idempotent.
 *       Other unary calls run exactly once (still measured); streaming calls pass through untouched.
 *   <li><b>Request size.</b> A request larger than {@link Builder#maxHedgedRequestBytes(int)} runs
 *       once, untouched; it is counted in {@link #requestsTooLarge()} and logged at INFO once per method and interceptor.
 *   <li><b>Status.</b> A status in {@link Builder#nonFatalCodes} ({@code UNAVAILABLE} by default)
 *       starts the next attempt at once; any other status ends the call with that status. The
 *       caller's deadline and {@code Context} bound every attempt; cancelling the call cancels every
 *       attempt. Server pushback ({@code grpc-retry-pushback-ms}) is relayed to the executor.
 *   <li><b>Marker.</b> Every hedge carries {@link HedgeHeaders#ATTEMPT} and the standard {@link
 *       HedgeHeaders#PREVIOUS_RPC_ATTEMPTS} (the number of attempts sent before it).
 *   <li><b>Placement.</b> With the {@link HedgeLoadBalancerProvider hedge_round_robin} policy on the
 *       channel, hedges go to backends the call has not tried and primaries avoid a backend far
 *       slower than its peers; without it, hedging still works but grpc's own policy places attempts.
 * </ul>
 *
 * <p><b>Cold start.</b> A percentile needs samples: the default delay has no estimate before 125
 * of a method's attempts on one backend. Until then the core's warm-up bound decides ({@link
 * PercentileDelay#fallback()}: from the first answer on, 4 times the lower median of the backends'
 * median latency, or more where the samples already support more; a slow backend cannot lift it),
 * and the budget the interceptor builds starts with {@link HedgeBudget#coldStartTokens(double)}
 * tokens (20 at 5%), an advance that the first primaries' deposits repay. A new channel thus hedges
 * its first calls around a slow backend instead of waiting on it. A percentile delay of your own
 * warms up the same way unless you give it a {@code fallback}; a budget of your own starts as you
 * built it.
 *
 * <p>Each method gets its own {@link HedgedExecutor} (named by the full method name, so its latency
 * and metrics are per method, and per backend within it); all of them share one {@link
 * HedgeBudget}, so the channel's extra load is bounded as a whole.
 *
 * <pre>{@code
 * HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
 *         .defaults(HedgeConfig.builder().maxExtraLoad(0.05).build())
 *         .method("shop.Catalog/*", MethodPolicy.builder().maxAttempts(3).build())
 *         .build();
 * ManagedChannel channel = NettyChannelBuilder.forTarget("dns:///catalog:443")
 *         .defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME)
 *         .intercept(hedging)
 *         .build();
 * }</pre>
 *
 * <p>Thread-safe; one instance per channel (it holds the channel's budget).
 */
public final class HedgingClientInterceptor implements ClientInterceptor {
    /** Requests larger than this are not hedged by default: 1 MiB, as grpc-java's own per-call buffer limit. */
    public static final int DEFAULT_MAX_HEDGED_REQUEST_BYTES = 1 << 20;

    /**
     * The defaults every method starts from unless {@link Builder#defaults(HedgeConfig)} replaces
     * them: hedge after the <b>p96</b> of the method's recent per-attempt latency, at most <b>5%</b>
     * extra attempts (one budget per channel), two attempts per call. Before the percentile is
     * trusted the core's warm-up bound decides, and the budget the interceptor builds starts with
     * initial tokens (see the class comment).
     * The delay sits one point below the budget on purpose: a delay at p95 asks for 5% hedges on
     * average, so a 5% budget is at its limit about half the time, and what it then denies are
     * exactly the slow calls hedging is for (GrpcHedgeBench's first runs showed it in p99.9). At p96
     * the budget is a safety cap that steady traffic does not reach. With budget feedback, as
     * {@link HedgeConfig.Builder#maxExtraLoad(double)} sets it: while the budget runs low the delay
     * rises, at least to the pooled percentile that asks for what the budget supplies, so a
     * backend that stalls a share of its calls (which the backends' own percentiles leave out)
     * cannot keep demand above the budget.
     */
    public static final HedgeConfig DEFAULT_CONFIG = HedgeConfig.builder()
            .delay(DelayPolicy.percentile(0.96).budgetFeedback(true).build())
            .budgetRatio(0.05)
            .build();

    private final HedgeConfig defaults;
    private final HedgeBudget budget;
    private final Map<String, MethodPolicy> policies;
    private final StatusClassifier classifier;
    private final int maxRequestBytes;
    private final HedgedExecutorRegistry registry;
    private final String namePrefix;
    private final ConcurrentHashMap<String, CallPlan> plans = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, TooLargeCount> tooLarge = new ConcurrentHashMap<>();

    private HedgingClientInterceptor(Builder b) {
        this.budget = b.defaults.budget().orElseGet(() -> HedgeBudget.builder()
                .ratio(b.defaults.budgetRatio())
                .initialTokens(HedgeBudget.coldStartTokens(b.defaults.budgetRatio()))
                .ticker(b.defaults.ticker())
                .build());
        this.defaults = HedgeConfig.from(b.defaults).budget(budget).build();
        this.policies = Collections.unmodifiableMap(new LinkedHashMap<>(b.policies));
        this.classifier = new StatusClassifier(b.nonFatalCodes);
        this.maxRequestBytes = b.maxRequestBytes;
        this.registry = b.registry != null ? b.registry : HedgedExecutorRegistry.of(defaults);
        this.namePrefix = b.namePrefix;
    }

    /** @return a builder with the defaults: {@link #DEFAULT_CONFIG}, UNAVAILABLE non-fatal, 1 MiB */
    public static Builder builder() {
        return new Builder();
    }

    /** @return an interceptor with every default ({@link #DEFAULT_CONFIG}: p96 delay, 5% budget, two attempts) */
    public static HedgingClientInterceptor ofDefaults() {
        return builder().build();
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
            MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
        if (method.getType() != MethodDescriptor.MethodType.UNARY) {
            return next.newCall(method, callOptions);
        }
        CallPlan plan = plans.computeIfAbsent(method.getFullMethodName(), name -> plan(method));
        if (plan == CallPlan.DISABLED) {
            return next.newCall(method, callOptions);
        }
        return new HedgingCall<>(plan, method, callOptions, next);
    }

    private CallPlan plan(MethodDescriptor<?, ?> method) {
        String name = method.getFullMethodName();
        MethodPolicy p = policyFor(name, method.getServiceName());
        if (!p.enabled()) {
            return CallPlan.DISABLED;
        }
        boolean idempotent = p.idempotent() != null ? p.idempotent() : method.isSafe() || method.isIdempotent();
        // idempotentByDefault is what each call passes anyway: set so that the executor's own
        // configuration (an endpoint listing the registry) tells the truth
        HedgeConfig.Builder c =
                HedgeConfig.from(defaults).errorClassifier(classifier).idempotentByDefault(idempotent);
        if (p.delay() != null) {
            c.delay(p.delay());
        }
        if (p.maxAttempts() != null) {
            c.maxAttempts(p.maxAttempts());
        }
        HedgedExecutor executor = registry.executor(namePrefix + name, c.build());
        TooLargeCount large = tooLarge.computeIfAbsent(name, n -> new TooLargeCount());
        return new CallPlan(executor, idempotent, maxRequestBytes, large);
    }

    private MethodPolicy policyFor(String fullMethodName, String serviceName) {
        MethodPolicy p = policies.get(fullMethodName);
        if (p == null && serviceName != null) {
            p = policies.get(serviceName + "/*");
        }
        if (p == null) {
            p = policies.get("*");
        }
        return p != null ? p : MethodPolicy.defaults();
    }

    /** @return the configuration every method starts from (holding the channel's shared budget) */
    public HedgeConfig defaults() {
        return defaults;
    }

    /** @return the budget all methods of this interceptor share */
    public HedgeBudget budget() {
        return budget;
    }

    /**
     * @return the registry of the per-method executors, created at a method's first call and named
     *     by the prefix and the full method name ("pkg.Service/Method"; no prefix by default); bind
     *     {@code HedgeRegistryMetrics.of(executors())} to a meter registry for metrics tagged by
     *     method (or use {@link GrpcHedgeMetrics}). With {@link Builder#registry(HedgedExecutorRegistry,
     *     String)} it is the registry given there, which may hold other executors too
     */
    public HedgedExecutorRegistry executors() {
        return registry;
    }

    /**
     * @param fullMethodName "pkg.Service/Method"
     * @return that method's executor, if it has been called through this interceptor and is handled
     */
    public Optional<HedgedExecutor> executor(String fullMethodName) {
        CallPlan plan = plans.get(fullMethodName);
        return plan == null || plan.executor() == null ? Optional.empty() : Optional.of(plan.executor());
    }

    /** @return calls not hedged because their request was over the size limit, per full method name */
    public Map<String, Long> requestsTooLarge() {
        Map<String, Long> m = new TreeMap<>();
        tooLarge.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }

    /** @return the size above which a request is not hedged, in bytes */
    public int maxHedgedRequestBytes() {
        return maxRequestBytes;
    }

    /** @return the status codes that start the next attempt at once */
    public Set<Status.Code> nonFatalCodes() {
        return classifier.nonFatalCodes();
    }

    @Override
    public String toString() {
        return "HedgingClientInterceptor{defaults=" + defaults + ", methods=" + policies.keySet() + "}";
    }

    /** Builds a {@link HedgingClientInterceptor}. Validates each setting at once. Not thread-safe. */
    public static final class Builder {
        private HedgeConfig defaults = DEFAULT_CONFIG;
        private final Map<String, MethodPolicy> policies = new LinkedHashMap<>();
        private Set<Status.Code> nonFatalCodes = EnumSet.of(Status.Code.UNAVAILABLE);
        private int maxRequestBytes = DEFAULT_MAX_HEDGED_REQUEST_BYTES;
        private HedgedExecutorRegistry registry;
        private String namePrefix = "";

        private Builder() {}

        /**
         * Creates the per-method executors in an existing registry (an application's named
         * executors) instead of a registry of the interceptor's own, so whatever lists or binds that
         * registry ({@code HedgeRegistryMetrics}, an actuator endpoint) sees them. Each executor is
         * named {@code namePrefix + fullMethodName}, e.g. {@code grpc:shop.Catalog/GetItem}: a
         * bounded set of names, one per method called. The interceptor takes a method's executor at
         * the method's first call and keeps it; an executor already in the registry under that name
         * is used as is, so two interceptors that share a registry need different prefixes unless
         * they are meant to share executors (and budget).
         *
         * @param registry where the per-method executors are created
         * @param namePrefix put before every full method name; may be empty
         * @return this
         */
        public Builder registry(HedgedExecutorRegistry registry, String namePrefix) {
            this.registry = Objects.requireNonNull(registry, "registry must not be null");
            this.namePrefix = Objects.requireNonNull(namePrefix, "namePrefix must not be null");
            return this;
        }

        /**
         * @param defaults what every method starts from: delay, maxAttempts, budget ratio (or a shared
         *     budget), deadline, scheduler. Its {@code idempotentByDefault} and error classifier are not
         *     used: idempotence comes from the method, status handling from {@link #nonFatalCodes}
         * @return this
         */
        public Builder defaults(HedgeConfig defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults must not be null");
            return this;
        }

        /**
         * @param pattern a full method name ("pkg.Service/Method"), a service wildcard
         *     ("pkg.Service/*") or "*" for every method; the most specific pattern wins
         * @param policy the method's settings
         * @return this
         */
        public Builder method(String pattern, MethodPolicy policy) {
            Objects.requireNonNull(pattern, "pattern must not be null");
            Objects.requireNonNull(policy, "policy must not be null");
            int slash = pattern.indexOf('/');
            boolean valid = pattern.equals("*")
                    || (slash > 0
                            && slash == pattern.lastIndexOf('/')
                            && slash < pattern.length() - 1
                            && (pattern.indexOf('*') < 0
                                    || pattern.endsWith("/*") && pattern.indexOf('*') == pattern.length() - 1));
            if (!valid) {
                throw new IllegalArgumentException(
                        "method pattern must be \"pkg.Service/Method\", \"pkg.Service/*\" or \"*\", was \"" + pattern
                                + "\"");
            }
            policies.put(pattern, policy);
            return this;
        }

        /**
         * @param codes status codes after which the next attempt starts at once (budget and
         *     maxAttempts permitting); every other non-OK status ends the call. Default {@code
         *     UNAVAILABLE}. OK is not allowed.
         * @return this
         */
        public Builder nonFatalCodes(Set<Status.Code> codes) {
            Objects.requireNonNull(codes, "nonFatalCodes must not be null");
            if (codes.contains(Status.Code.OK)) {
                throw new IllegalArgumentException("nonFatalCodes must not contain OK, was " + codes);
            }
            this.nonFatalCodes = codes.isEmpty() ? EnumSet.noneOf(Status.Code.class) : EnumSet.copyOf(codes);
            return this;
        }

        /**
         * @param bytes requests whose serialized size is above this are not hedged (they run once,
         *     counted in {@link #requestsTooLarge()}); in [0, 2^31 - 1], default 1 MiB
         * @return this
         */
        public Builder maxHedgedRequestBytes(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("maxHedgedRequestBytes must be >= 0, was " + bytes);
            }
            this.maxRequestBytes = bytes;
            return this;
        }

        /** @return the interceptor */
        public HedgingClientInterceptor build() {
            return new HedgingClientInterceptor(this);
        }
    }
}

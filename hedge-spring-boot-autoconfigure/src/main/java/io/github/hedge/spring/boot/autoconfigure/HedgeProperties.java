package io.github.hedge.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code hedge.*} properties: one {@code defaults} block and a map of named {@code instances}.
 * An instance inherits every value it does not set from {@code defaults}; there is no third layer.
 *
 * <pre>
 * hedge.defaults.max-extra-load=0.05
 * hedge.instances.user-reads.idempotent=true
 * hedge.instances.user-reads.delay.percentile=0.99
 * hedge.instances.user-reads.max-delay=50ms
 * </pre>
 *
 * <p>Values are checked when the application starts (see {@link InvalidHedgePropertyException}).
 * A mutable binding target, not thread-safe; {@link HedgeInstances} copies what it needs.
 */
@ConfigurationProperties(prefix = "hedge", ignoreUnknownFields = false)
public class HedgeProperties {

    /** Settings every instance inherits unless it sets its own, and the settings of instances not listed. */
    private final Defaults defaults = new Defaults();

    /** Named instances, as in @Hedged("user-reads"); each inherits every unset value from hedge.defaults. */
    private final Map<String, Instance> instances = new LinkedHashMap<>();

    /** The @Hedged advisor. */
    private final Aspect aspect = new Aspect();

    /** Re-reading hedge.* when the environment changes. */
    private final Refresh refresh = new Refresh();

    /** Hedging of the auto-configured Cassandra CqlSession (needs hedge-cassandra and the driver). */
    private final Cassandra cassandra = new Cassandra();

    /** The gRPC client interceptor and balancer (needs hedge-grpc). */
    private final Grpc grpc = new Grpc();

    /** Micrometer Observation per hedged call and per attempt (needs an ObservationRegistry bean). */
    private final Observations observations = new Observations();

    /** Hedged HTTP calls through Spring Boot's WebClient, RestClient and RestTemplate builders (needs hedge-http). */
    private final Http http = new Http();

    /** @return the defaults block */
    public Defaults getDefaults() {
        return defaults;
    }

    /** @return the named instances, in the order they were bound */
    public Map<String, Instance> getInstances() {
        return instances;
    }

    /** @return the aspect settings */
    public Aspect getAspect() {
        return aspect;
    }

    /** @return the refresh settings */
    public Refresh getRefresh() {
        return refresh;
    }

    /** @return the Cassandra settings */
    public Cassandra getCassandra() {
        return cassandra;
    }

    /** @return the gRPC settings */
    public Grpc getGrpc() {
        return grpc;
    }

    /** @return the observation settings */
    public Observations getObservations() {
        return observations;
    }

    /** @return the HTTP client settings */
    public Http getHttp() {
        return http;
    }

    /**
     * The delay before a hedge: at most one of {@code percentile}, {@code fixed} or {@code
     * increasing.*} per block. Every delay is clamped to [min-delay, max-delay].
     */
    public static class Delay {
        /**
         * Adaptive delay: this percentile of recent per-attempt latency, in (0, 1) (0.95 for p95).
         * Default when no delay is set: 1 - max-extra-load.
         */
        private Double percentile;

        /** Fixed delay before every hedge, >= 0. */
        private Duration fixed;

        /** Linearly increasing delay: initial + (k - 2) * step before attempt k. */
        private final Increasing increasing = new Increasing();

        /** @return the percentile, or null */
        public Double getPercentile() {
            return percentile;
        }

        /** @param percentile the percentile in (0, 1) */
        public void setPercentile(Double percentile) {
            this.percentile = percentile;
        }

        /** @return the fixed delay, or null */
        public Duration getFixed() {
            return fixed;
        }

        /** @param fixed the fixed delay */
        public void setFixed(Duration fixed) {
            this.fixed = fixed;
        }

        /** @return the increasing delay settings */
        public Increasing getIncreasing() {
            return increasing;
        }

        boolean isEmpty() {
            return percentile == null && fixed == null && increasing.isEmpty();
        }
    }

    /** A delay that grows with each hedge, as gocql's IncreasingSpeculativeExecution. */
    public static class Increasing {
        /** Delay before the first hedge, >= 0. Required when delay.increasing is used. */
        private Duration initial;

        /** Added for each further hedge, >= 0. Required when delay.increasing is used. */
        private Duration step;

        /** Largest delay, >= initial. Default: max-delay. */
        private Duration max;

        /** @return the initial delay, or null */
        public Duration getInitial() {
            return initial;
        }

        /** @param initial the initial delay */
        public void setInitial(Duration initial) {
            this.initial = initial;
        }

        /** @return the step, or null */
        public Duration getStep() {
            return step;
        }

        /** @param step the step */
        public void setStep(Duration step) {
            this.step = step;
        }

        /** @return the cap, or null */
        public Duration getMax() {
            return max;
        }

        /** @param max the cap */
        public void setMax(Duration max) {
            this.max = max;
        }

        boolean isEmpty() {
            return initial == null && step == null && max == null;
        }
    }

    /** The defaults block: the built-in defaults below apply where it sets nothing. */
    public static class Defaults {
        /** When to send a hedge (at most one of percentile, fixed, increasing). */
        private final Delay delay = new Delay();

        /** Most attempts per call, the primary included, in [1, 16]. */
        private Integer maxAttempts = 2;

        /**
         * Extra attempts allowed per primary call in the long run, in (0, 1); also sets the default
         * delay to the (1 - max-extra-load) percentile.
         */
        private Double maxExtraLoad = 0.05;

        /** Smallest delay before a hedge, >= 0. */
        private Duration minDelay = Duration.ofMillis(0);

        /** Largest delay before a hedge, > 0 and >= min-delay. */
        private Duration maxDelay = Duration.ofSeconds(10);

        /** Overall deadline of a call: when it passes, every attempt is cancelled. Default: none. */
        private Duration timeout;

        /** Whether calls may run more than once. Never hedge what is not marked idempotent. */
        private Boolean idempotent = false;

        /** Calls slower than this are logged with their per-attempt trace (rate-limited). Default: no log. */
        private Duration slowCallThreshold;

        /** How long a call counts in the executor's savings (HedgedExecutor#savings), > 0. */
        private Duration savingsWindow = Duration.ofMinutes(5);

        /**
         * Share of beaten primaries left running instead of cancelled, in [0, 1], so the savings
         * estimate sees their real latency, at the cost of the servers' work on them.
         */
        private Double loserSampling = 0.0;

        /** @return the delay settings */
        public Delay getDelay() {
            return delay;
        }

        /** @return most attempts per call */
        public Integer getMaxAttempts() {
            return maxAttempts;
        }

        /** @param maxAttempts most attempts per call */
        public void setMaxAttempts(Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        /** @return the extra load allowed */
        public Double getMaxExtraLoad() {
            return maxExtraLoad;
        }

        /** @param maxExtraLoad the extra load allowed */
        public void setMaxExtraLoad(Double maxExtraLoad) {
            this.maxExtraLoad = maxExtraLoad;
        }

        /** @return the smallest delay */
        public Duration getMinDelay() {
            return minDelay;
        }

        /** @param minDelay the smallest delay */
        public void setMinDelay(Duration minDelay) {
            this.minDelay = minDelay;
        }

        /** @return the largest delay */
        public Duration getMaxDelay() {
            return maxDelay;
        }

        /** @param maxDelay the largest delay */
        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        /** @return the deadline, or null */
        public Duration getTimeout() {
            return timeout;
        }

        /** @param timeout the deadline */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        /** @return whether calls are idempotent by default */
        public Boolean getIdempotent() {
            return idempotent;
        }

        /** @param idempotent whether calls are idempotent by default */
        public void setIdempotent(Boolean idempotent) {
            this.idempotent = idempotent;
        }

        /** @return the slow-call threshold, or null */
        public Duration getSlowCallThreshold() {
            return slowCallThreshold;
        }

        /** @param slowCallThreshold the slow-call threshold */
        public void setSlowCallThreshold(Duration slowCallThreshold) {
            this.slowCallThreshold = slowCallThreshold;
        }

        /** @return how long a call counts in the savings */
        public Duration getSavingsWindow() {
            return savingsWindow;
        }

        /** @param savingsWindow how long a call counts in the savings */
        public void setSavingsWindow(Duration savingsWindow) {
            this.savingsWindow = savingsWindow;
        }

        /** @return the share of beaten primaries left running */
        public Double getLoserSampling() {
            return loserSampling;
        }

        /** @param loserSampling the share of beaten primaries left running */
        public void setLoserSampling(Double loserSampling) {
            this.loserSampling = loserSampling;
        }
    }

    /** One named instance: every setting it leaves unset comes from hedge.defaults. */
    public static class Instance {
        /** When to send a hedge (at most one of percentile, fixed, increasing). */
        private final Delay delay = new Delay();

        /** Most attempts per call, the primary included, in [1, 16]. */
        private Integer maxAttempts;

        /** Extra attempts allowed per primary call, in (0, 1); also the default delay's percentile. */
        private Double maxExtraLoad;

        /** Smallest delay before a hedge, >= 0. */
        private Duration minDelay;

        /** Largest delay before a hedge, > 0. */
        private Duration maxDelay;

        /** Overall deadline of a call. */
        private Duration timeout;

        /** Whether calls may run more than once. */
        private Boolean idempotent;

        /** Calls slower than this are logged with their per-attempt trace. */
        private Duration slowCallThreshold;

        /** How long a call counts in the executor's savings, > 0. */
        private Duration savingsWindow;

        /** Share of beaten primaries left running to completion instead of cancelled, in [0, 1]. */
        private Double loserSampling;

        /** @return the delay settings */
        public Delay getDelay() {
            return delay;
        }

        /** @return most attempts per call, or null */
        public Integer getMaxAttempts() {
            return maxAttempts;
        }

        /** @param maxAttempts most attempts per call */
        public void setMaxAttempts(Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        /** @return the extra load allowed, or null */
        public Double getMaxExtraLoad() {
            return maxExtraLoad;
        }

        /** @param maxExtraLoad the extra load allowed */
        public void setMaxExtraLoad(Double maxExtraLoad) {
            this.maxExtraLoad = maxExtraLoad;
        }

        /** @return the smallest delay, or null */
        public Duration getMinDelay() {
            return minDelay;
        }

        /** @param minDelay the smallest delay */
        public void setMinDelay(Duration minDelay) {
            this.minDelay = minDelay;
        }

        /** @return the largest delay, or null */
        public Duration getMaxDelay() {
            return maxDelay;
        }

        /** @param maxDelay the largest delay */
        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        /** @return the deadline, or null */
        public Duration getTimeout() {
            return timeout;
        }

        /** @param timeout the deadline */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        /** @return whether calls are idempotent, or null */
        public Boolean getIdempotent() {
            return idempotent;
        }

        /** @param idempotent whether calls are idempotent */
        public void setIdempotent(Boolean idempotent) {
            this.idempotent = idempotent;
        }

        /** @return the slow-call threshold, or null */
        public Duration getSlowCallThreshold() {
            return slowCallThreshold;
        }

        /** @param slowCallThreshold the slow-call threshold */
        public void setSlowCallThreshold(Duration slowCallThreshold) {
            this.slowCallThreshold = slowCallThreshold;
        }

        /** @return how long a call counts in the savings */
        public Duration getSavingsWindow() {
            return savingsWindow;
        }

        /** @param savingsWindow how long a call counts in the savings */
        public void setSavingsWindow(Duration savingsWindow) {
            this.savingsWindow = savingsWindow;
        }

        /** @return the share of beaten primaries left running */
        public Double getLoserSampling() {
            return loserSampling;
        }

        /** @param loserSampling the share of beaten primaries left running */
        public void setLoserSampling(Double loserSampling) {
            this.loserSampling = loserSampling;
        }
    }

    /** Settings of the @Hedged advisor. */
    public static class Aspect {
        /**
         * Order of the @Hedged advisor among other advice (lower runs outside). The default,
         * Ordered.LOWEST_PRECEDENCE - 3, runs inside resilience4j's @Retry and @CircuitBreaker.
         */
        private int order = 2147483644;

        /** @return the order */
        public int getOrder() {
            return order;
        }

        /** @param order the order */
        public void setOrder(int order) {
            this.order = order;
        }
    }

    /** Micrometer Observation per hedged call and per attempt. */
    public static class Observations {
        /**
         * Whether every instance, the gRPC interceptor and the Cassandra session record an observation
         * per call and per attempt, when an ObservationRegistry bean exists.
         */
        private boolean enabled = true;

        /**
         * Whether attempt observations carry the target address (hedge.target), a high-cardinality key
         * value that may identify hosts.
         */
        private boolean includeTargets = false;

        /** @return whether observations are enabled */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether observations are enabled */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return whether attempts carry the target address */
        public boolean isIncludeTargets() {
            return includeTargets;
        }

        /** @param includeTargets whether attempts carry the target address */
        public void setIncludeTargets(boolean includeTargets) {
            this.includeTargets = includeTargets;
        }
    }

    /** Re-reading hedge.* when the environment changes. */
    public static class Refresh {
        /**
         * Whether instances are reconfigured when Spring Cloud publishes an EnvironmentChangeEvent for a
         * hedge.* key (POST /actuator/refresh, a config-server push). Needs spring-cloud-context.
         */
        private boolean enabled = true;

        /** @return whether refresh is enabled */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether refresh is enabled */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** How hedge-cassandra is plugged into Spring Boot's auto-configured Cassandra session. */
    public enum CassandraMode {
        /** The CqlSession bean is a HedgedCqlSession around the auto-configured session. */
        WRAPPED,
        /** The driver's own speculative executions, timed and budgeted by HedgeSpeculativeExecutionPolicy. */
        POLICY,
        /** hedge leaves the Cassandra session alone. */
        OFF
    }

    /** Hedging of the auto-configured Cassandra CqlSession. */
    public static class Cassandra {
        /**
         * wrapped: the CqlSession bean is a HedgedCqlSession (hedge times and places every attempt);
         * policy: the driver's speculative executions with HedgeSpeculativeExecutionPolicy; off: untouched.
         */
        private CassandraMode mode = CassandraMode.WRAPPED;

        /** The hedge instance whose settings the session uses. */
        private String instance = "cassandra";

        /**
         * Policy mode only: the driver's timer tick (advanced.netty.timer.tick-duration), which rounds
         * every delay up. Default: the driver's (100 ms).
         */
        private Duration timerTick;

        /** @return the mode */
        public CassandraMode getMode() {
            return mode;
        }

        /** @param mode the mode */
        public void setMode(CassandraMode mode) {
            this.mode = mode;
        }

        /** @return the instance name */
        public String getInstance() {
            return instance;
        }

        /** @param instance the instance name */
        public void setInstance(String instance) {
            this.instance = instance;
        }

        /** @return the timer tick, or null for the driver's */
        public Duration getTimerTick() {
            return timerTick;
        }

        /** @param timerTick the timer tick */
        public void setTimerTick(Duration timerTick) {
            this.timerTick = timerTick;
        }
    }

    /** The gRPC client interceptor and balancer. */
    public static class Grpc {
        /** Whether the HedgingClientInterceptor bean and the channel configurer are created. */
        private boolean enabled = true;

        /**
         * The hedge instance that gives every method its default settings; its max-extra-load is one
         * budget for all channels.
         */
        private String instance = "grpc";

        /**
         * Whether channels configured by HedgeGrpcChannelConfigurer use the hedge_round_robin balancer, which
         * sends a hedge to a backend the call has not tried yet.
         */
        private boolean loadBalancing = true;

        /** Requests larger than this many bytes are not hedged, in [0, 2147483647]. */
        private Integer maxHedgedRequestBytes = 1048576;

        /** gRPC status codes (names, as UNAVAILABLE) that start the next attempt at once instead of ending the call. */
        private List<String> nonFatalCodes = new ArrayList<>(List.of("UNAVAILABLE"));

        /**
         * Per-method policies keyed by full method name or service pattern, in brackets:
         * hedge.grpc.methods[shop.Catalog/GetItem].idempotent=true, hedge.grpc.methods[shop.Catalog/*].max-attempts=3.
         */
        private final Map<String, GrpcMethod> methods = new LinkedHashMap<>();

        /** @return whether enabled */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether enabled */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the instance name */
        public String getInstance() {
            return instance;
        }

        /** @param instance the instance name */
        public void setInstance(String instance) {
            this.instance = instance;
        }

        /** @return whether the balancer is set on configured channels */
        public boolean isLoadBalancing() {
            return loadBalancing;
        }

        /** @param loadBalancing whether the balancer is set on configured channels */
        public void setLoadBalancing(boolean loadBalancing) {
            this.loadBalancing = loadBalancing;
        }

        /** @return the request size limit in bytes */
        public Integer getMaxHedgedRequestBytes() {
            return maxHedgedRequestBytes;
        }

        /** @param maxHedgedRequestBytes the request size limit in bytes */
        public void setMaxHedgedRequestBytes(Integer maxHedgedRequestBytes) {
            this.maxHedgedRequestBytes = maxHedgedRequestBytes;
        }

        /** @return the non-fatal status code names */
        public List<String> getNonFatalCodes() {
            return nonFatalCodes;
        }

        /** @param nonFatalCodes the non-fatal status code names */
        public void setNonFatalCodes(List<String> nonFatalCodes) {
            this.nonFatalCodes = nonFatalCodes;
        }

        /** @return the per-method policies */
        public Map<String, GrpcMethod> getMethods() {
            return methods;
        }
    }

    /** One gRPC method's (or service pattern's) policy; unset values come from hedge.grpc.instance. */
    public static class GrpcMethod {
        /** Whether calls of the method are hedged at all. */
        private Boolean enabled;

        /**
         * Whether the method may run twice; overrides the .proto's idempotency_level. Unset: the descriptor
         * decides (NO_SIDE_EFFECTS or IDEMPOTENT in the .proto), else not hedged.
         */
        private Boolean idempotent;

        /** Attempts per call, in [1, 16]. */
        private Integer maxAttempts;

        /** The method's delay (percentile or fixed); clamped to the instance's [min-delay, max-delay]. */
        private final Delay delay = new Delay();

        /** @return whether enabled, or null */
        public Boolean getEnabled() {
            return enabled;
        }

        /** @param enabled whether enabled */
        public void setEnabled(Boolean enabled) {
            this.enabled = enabled;
        }

        /** @return whether idempotent, or null */
        public Boolean getIdempotent() {
            return idempotent;
        }

        /** @param idempotent whether idempotent */
        public void setIdempotent(Boolean idempotent) {
            this.idempotent = idempotent;
        }

        /** @return max attempts, or null */
        public Integer getMaxAttempts() {
            return maxAttempts;
        }

        /** @param maxAttempts max attempts */
        public void setMaxAttempts(Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        /** @return the delay */
        public Delay getDelay() {
            return delay;
        }
    }

    /** Hedged HTTP calls: which requests may be hedged, and the clients (services) called. */
    public static class Http {
        /**
         * Whether Spring Boot's auto-configured WebClient.Builder, RestClient.Builder and RestTemplateBuilder get
         * the hedging filter and interceptor.
         */
        private boolean enabled = true;

        /**
         * Whether requests to hosts not listed under hedge.http.clients are hedged too, on hedge.http.instance and
         * to the request's own URI. Off by default: with no instances listed, a hedge goes to the URL the primary
         * waits on, and may add load without reaching another replica.
         */
        private boolean hedgeUnlisted = false;

        /**
         * The hedge instance (hedge.instances.&lt;name&gt;, else hedge.defaults) that runs requests to hosts not
         * listed under hedge.http.clients, when hedge.http.hedge-unlisted is on.
         */
        private String instance = "http";

        /** Methods hedged without a mark; the others (POST, PATCH) only when marked. */
        private List<String> hedgedMethods = new ArrayList<>(List.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE"));

        /** Header whose presence marks a request idempotent; empty for none. */
        private String idempotencyKeyHeader = "Idempotency-Key";

        /** Routes hedged whatever their method, as "METHOD /ant/path/**", for every client. */
        private List<String> idempotentRoutes = new ArrayList<>();

        /**
         * Response statuses that fail an attempt and start the next one at once, each in [400, 599]. Every
         * other 5xx also fails an attempt, but ends the call.
         */
        private List<Integer> retryableStatuses = new ArrayList<>(List.of(500, 502, 503, 504));

        /** Request bodies longer than this many bytes are not hedged (and are counted), in [0, 2147483647]. */
        private Integer maxHedgedRequestBytes = 1048576;

        /**
         * Services called, keyed by the host of request URIs (http://users/... is client users):
         * hedge.http.clients.users.instances=http://10.0.0.3:8080,http://10.0.0.4:8080.
         */
        private final Map<String, HttpClient> clients = new LinkedHashMap<>();

        /** @return whether enabled */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether enabled */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return whether requests to unlisted hosts are hedged */
        public boolean isHedgeUnlisted() {
            return hedgeUnlisted;
        }

        /** @param hedgeUnlisted whether requests to unlisted hosts are hedged */
        public void setHedgeUnlisted(boolean hedgeUnlisted) {
            this.hedgeUnlisted = hedgeUnlisted;
        }

        /** @return the instance name for unlisted hosts */
        public String getInstance() {
            return instance;
        }

        /** @param instance the instance name for unlisted hosts */
        public void setInstance(String instance) {
            this.instance = instance;
        }

        /** @return the hedged methods */
        public List<String> getHedgedMethods() {
            return hedgedMethods;
        }

        /** @param hedgedMethods the hedged methods */
        public void setHedgedMethods(List<String> hedgedMethods) {
            this.hedgedMethods = hedgedMethods;
        }

        /** @return the idempotency key header */
        public String getIdempotencyKeyHeader() {
            return idempotencyKeyHeader;
        }

        /** @param idempotencyKeyHeader the idempotency key header */
        public void setIdempotencyKeyHeader(String idempotencyKeyHeader) {
            this.idempotencyKeyHeader = idempotencyKeyHeader;
        }

        /** @return the idempotent routes */
        public List<String> getIdempotentRoutes() {
            return idempotentRoutes;
        }

        /** @param idempotentRoutes the idempotent routes */
        public void setIdempotentRoutes(List<String> idempotentRoutes) {
            this.idempotentRoutes = idempotentRoutes;
        }

        /** @return the retryable statuses */
        public List<Integer> getRetryableStatuses() {
            return retryableStatuses;
        }

        /** @param retryableStatuses the retryable statuses */
        public void setRetryableStatuses(List<Integer> retryableStatuses) {
            this.retryableStatuses = retryableStatuses;
        }

        /** @return the request size limit in bytes */
        public Integer getMaxHedgedRequestBytes() {
            return maxHedgedRequestBytes;
        }

        /** @param maxHedgedRequestBytes the request size limit in bytes */
        public void setMaxHedgedRequestBytes(Integer maxHedgedRequestBytes) {
            this.maxHedgedRequestBytes = maxHedgedRequestBytes;
        }

        /** @return the clients */
        public Map<String, HttpClient> getClients() {
            return clients;
        }
    }

    /** One service called over HTTP; unset values come from hedge.http.*. */
    public static class HttpClient {
        /** Whether requests to this host are hedged at all. */
        private boolean enabled = true;

        /** The hedge instance that runs this client's requests. Default: the client's name. */
        private String instance;

        /**
         * The service's instances (base URIs with scheme, host and port). Set: each attempt goes to one of them, a
         * hedge to one the call has not tried. Empty: every attempt goes to the request's URI.
         */
        private List<java.net.URI> instances = new ArrayList<>();

        /** Routes of this client hedged whatever their method, as "METHOD /ant/path/**" (added to hedge.http.idempotent-routes). */
        private List<String> idempotentRoutes = new ArrayList<>();

        /** @return whether enabled */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether enabled */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the instance name, or null for the client's name */
        public String getInstance() {
            return instance;
        }

        /** @param instance the instance name */
        public void setInstance(String instance) {
            this.instance = instance;
        }

        /** @return the service's instances */
        public List<java.net.URI> getInstances() {
            return instances;
        }

        /** @param instances the service's instances */
        public void setInstances(List<java.net.URI> instances) {
            this.instances = instances;
        }

        /** @return the client's idempotent routes */
        public List<String> getIdempotentRoutes() {
            return idempotentRoutes;
        }

        /** @param idempotentRoutes the client's idempotent routes */
        public void setIdempotentRoutes(List<String> idempotentRoutes) {
            this.idempotentRoutes = idempotentRoutes;
        }
    }
}

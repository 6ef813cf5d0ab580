package io.github.hedge.cassandra;

import com.datastax.dse.driver.api.core.cql.reactive.ReactiveResultSet;
import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.NoNodeAvailableException;
import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import com.datastax.oss.driver.api.core.context.DriverContext;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.metadata.Metadata;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metrics.Metrics;
import com.datastax.oss.driver.api.core.servererrors.QueryValidationException;
import com.datastax.oss.driver.api.core.servererrors.ReadTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.session.Request;
import com.datastax.oss.driver.api.core.type.reflect.GenericType;
import io.github.hedge.cassandra.internal.BlockingResultSet;
import io.github.hedge.cassandra.internal.DriverErrors;
import io.github.hedge.cassandra.internal.FailoverPages;
import io.github.hedge.cassandra.internal.HedgedReactiveResultSet;
import io.github.hedge.cassandra.internal.LatencyScores;
import io.github.hedge.cassandra.internal.RateLimitedLog;
import io.github.hedge.cassandra.internal.Statements;
import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.ErrorClassifier;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link CqlSession} whose idempotent statements are hedged by a {@link HedgedExecutor}: the
 * primary goes to one replica of the statement's partition; if it has not answered after the
 * delay (by default the p96 of recent per-attempt latency), a hedge goes to a replica not tried
 * yet, budget permitting (by default at most 5% extra executions); the first <em>successful</em>
 * answer wins.
 *
 * <pre>{@code
 * CqlSession session = HedgedCqlSession.wrap(CqlSession.builder().build());
 * session.execute(SimpleStatement.newInstance("SELECT * FROM ks.users WHERE id = ?", id)); // hedged
 * }</pre>
 *
 * <h2>How each statement runs</h2>
 *
 * <ul>
 *   <li><b>Idempotence.</b> A statement is hedged only if it may run twice: {@link
 *       Statement#setIdempotent(Boolean) setIdempotent(true)} (per statement, opt in; {@code false}
 *       opts out), else the profile's {@code basic.request.default-idempotence}, else (inference,
 *       on by default) only a plain {@code SELECT}. Counter updates, LWTs, list appends and batches
 *       are never inferred idempotent. Other statements run exactly once, through the driver as
 *       before, and are counted ({@code executor().stats().notHedgedNonIdempotent()}) and logged
 *       (INFO, at most one line a minute: "not hedged: non-idempotent").
 *   <li><b>Replicas.</b> Candidates are the replicas of the statement's partition (the token map,
 *       with the keyspace resolved as the driver's load-balancing policy does), in the order of the
 *       profile's load-balancing policy (which shuffles replicas and keeps to the local
 *       datacenter), then reordered by latency ({@link LatencyAwareOptions}, on by default): a
 *       replica far slower than its peers goes last. Attempt k is pinned with {@link
 *       Statement#setNode} to the k-th candidate, so a hedge never goes to a replica already tried;
 *       when every candidate has been tried, no further attempt is made.
 *   <li><b>Unroutable statements</b> (no token map, no keyspace, no routing key, or a keyspace
 *       whose replication is unknown) follow {@link Unroutable}: by default they are hedged across
 *       the coordinators of the load-balancing policy's plan (any coordinator can serve them). A
 *       statement already pinned with {@code setNode} by the caller runs as is.
 *   <li><b>Timing and budget</b> come from hedge: the delay is timed by hedge's scheduler (exact to
 *       about a millisecond, unlike the driver's 100 ms timer tick) and a hedge is charged to the
 *       budget when it is sent.
 *   <li><b>Losers.</b> CQL cannot cancel a request on the server: a losing execution runs there to
 *       the end whatever the client does, and the driver keeps its stream id until the answer
 *       arrives either way. So by default ({@link Losers#LET_FINISH}) a loser is left to finish and
 *       its full latency feeds latency-aware ordering; {@link Losers#DROP} cancels it in the driver
 *       (the answer is discarded on arrival) and records only the time it ran until then.
 *   <li><b>Timeout.</b> The statement's request timeout ({@link Statement#getTimeout()}, else the
 *       profile's {@code basic.request.timeout}) bounds the whole call, hedges and retries included,
 *       as it bounds one {@code execute()} of the driver: it is the call's deadline in the executor
 *       (or the configuration's own {@code deadline}, when shorter), and when it passes the call
 *       fails with the driver's {@link DriverTimeoutException}.
 *   <li><b>Failures.</b> A failed attempt never wins while another runs. The driver's errors that
 *       every replica would answer alike (query validation, function failure, read/write failure,
 *       an LWT of unknown outcome, the request timeout, the session's throttler...) end the call
 *       whatever the configuration's {@link ErrorClassifier}; it decides the others (by default
 *       every other exception starts the next replica at once, budget permitting). The driver's
 *       retry policy still runs inside each attempt (a {@code RETRY_NEXT} ends the attempt, since
 *       it is pinned, and the node's error inside the {@code AllNodesFailedException} is the one
 *       classified). The classification is listed in {@code docs/cassandra.md}.
 * </ul>
 *
 * <p>Later pages of a result (iterating a synchronous result set, or {@code fetchNextPage}) are
 * fetched through the driver from the replica that answered the first page, not hedged (when that
 * replica cannot take the request, through the driver's query plan, as without hedge); a
 * statement the caller executes with a paging state of its own is hedged like any other. {@code
 * executeReactive} is hedged like {@code executeAsync}: the call starts when its rows are
 * subscribed, and cancelling that subscription cancels the call (no hedge starts afterwards).
 * Prepare and other request types pass through unhedged.
 *
 * <p>Outcomes: {@link #executor()} gives the core's events ({@code CallCompleted} with the
 * replica of each attempt), stats, and what {@code HedgeMetrics} and {@code SlowCallLog} bind to;
 * each call's {@code operation} label is its execution profile's name. Statement text reaches
 * events (for the slow-call log) only with {@link Builder#statementTextInDetails(boolean)}; bound
 * values never do.
 *
 * <p>Cancelling the future of {@code executeAsync} ends the call: no further attempt starts (a
 * request already sent runs on the server to the end, as CQL cannot cancel it). Closing this
 * session closes the wrapped one; with {@code close()} the attempts in flight still answer their
 * calls. Thread-safe, like the session it wraps.
 */
public final class HedgedCqlSession implements CqlSession {
    private static final Logger LOG = LoggerFactory.getLogger(HedgedCqlSession.class);
    /** The longest deadline hedge-core accepts. */
    private static final Duration MAX_DEADLINE = Duration.ofDays(365);

    /** What happens to a hedgeable statement that cannot be routed to its replicas. */
    public enum Unroutable {
        /** hedge it across the coordinators of the load-balancing policy's plan (the default) */
        HEDGE_ACROSS_COORDINATORS,
        /** run it once through the driver, as without hedge */
        NOT_HEDGED
    }

    /** What happens to an attempt that lost. */
    public enum Losers {
        /** leave it running in the driver so its full latency is measured (the default) */
        LET_FINISH,
        /** cancel it in the driver; its answer is discarded on arrival */
        DROP
    }

    private final CqlSession delegate;
    private final String name;
    private final HedgeConfig config;
    private final HedgedExecutorRegistry registry; // null: the session's own executor
    private final HedgedExecutor executor; // the own executor, or the registry's when the session was built
    /** Per-node latency: ordering (when on), stall detection and the default configuration's warm-up. */
    private final LatencyScores<Node> scores;

    private final boolean ordering;
    private final boolean inferIdempotence;
    private final Unroutable unroutable;
    private final Losers losers;
    /** Set when the session starts closing: no attempt is sent after it, not even a retry. */
    private volatile boolean closing;

    private final boolean statementText;
    private final RateLimitedLog nonIdempotentLog;
    private final LongAdder unroutableCount = new LongAdder();

    private HedgedCqlSession(Builder b) {
        this.delegate = b.delegate;
        this.name = b.name;
        LatencyAwareOptions la = b.latencyAware;
        Ticker ticker = b.config != null ? b.config.ticker() : Ticker.system();
        this.ordering = la.enabled();
        // kept with ordering off too: the default configuration warms up on them
        this.scores = LatencyScores.of(la, ticker);
        this.config = b.config != null ? b.config : defaultConfig(b.losers);
        this.registry = b.registry;
        this.executor = registry == null ? HedgedExecutor.of(b.name, config) : registry.executor(b.name, config);
        this.inferIdempotence = b.inferIdempotence;
        this.unroutable = b.unroutable;
        this.losers = b.losers;
        this.statementText = b.statementText;
        this.nonIdempotentLog = new RateLimitedLog(LOG, Duration.ofMinutes(1).toNanos());
    }

    /**
     * Wraps a session with the defaults of {@link #builder(CqlSession)}.
     *
     * @param session the session to wrap; closing the wrapper closes it
     * @return the hedged session
     */
    public static HedgedCqlSession wrap(CqlSession session) {
        return builder(session).build();
    }

    /**
     * Wraps a session with the given hedging configuration (delay, budget, attempts...).
     *
     * @param session the session to wrap; closing the wrapper closes it
     * @param config the executor's configuration
     * @return the hedged session
     */
    public static HedgedCqlSession wrap(CqlSession session, HedgeConfig config) {
        return builder(session).hedgeConfig(config).build();
    }

    /**
     * @param session the session to wrap
     * @return a builder; defaults: executor name {@code cassandra}, {@link #defaultConfig()},
     *     latency-aware ordering on, idempotence inference on, {@link Unroutable#HEDGE_ACROSS_COORDINATORS},
     *     {@link Losers#LET_FINISH}, no statement text in events
     */
    public static Builder builder(CqlSession session) {
        return new Builder(session);
    }

    /**
     * The default hedging configuration: a 5% budget, a delay at the p96 of recent per-attempt
     * latency, two attempts, query validation errors fatal (they end the call whatever the
     * configuration: see the class comment).
     *
     * <p>Why p96 and not p95 ({@code maxExtraLoad(0.05)}): at the p95 the expected demand for
     * hedges equals the budget, so every burst of slow answers meets a spent budget and exactly the
     * slowest calls go unhedged (measured in {@code SideBySide}: 104 denials in 23,866 calls, p99.9
     * 2.1x the driver's constant policy). At the p96 demand is about 4/5 of the budget and bursts
     * fit in it.
     *
     * <p>Every primary beaten by a hedge is left to finish in the executor too ({@link
     * HedgeConfig.Builder#loserSampling(double) loserSampling(1.0)}), so what hedging saved ({@link
     * HedgedExecutor#savings()}) is computed from real latencies, not lower bounds. That costs
     * nothing here: the server runs a loser to the end anyway, and with {@link Losers#LET_FINISH}
     * the driver reads its answer anyway.
     *
     * <p><b>Warm-up.</b> Until the percentile has its first estimate, the core's warm-up bound
     * decides ({@link PercentileDelay#fallback()}: from the first answer on, 4 times the median
     * node's median latency, or more where the samples already support more), and the budget the
     * executor builds starts with {@link HedgeBudget#coldStartTokens(double) 20 tokens} (an advance
     * that the first primaries' deposits repay). A new session then hedges its first calls around a
     * slow replica instead of waiting on it (hedge-benchmarks' {@code SeedScenario}), with or
     * without latency-aware ordering, and so does a session given a configuration of its own with a
     * percentile delay.
     *
     * @return the configuration, for {@link Losers#LET_FINISH}
     */
    public static HedgeConfig defaultConfig() {
        return defaultConfig(Losers.LET_FINISH);
    }

    /**
     * {@link #defaultConfig()} for a way of treating losers: with {@link Losers#DROP} nothing is
     * left to finish ({@code loserSampling(0)}), since dropping is what was asked for.
     *
     * @param losers what happens to losing executions
     * @return the configuration the builder uses when none is given
     */
    public static HedgeConfig defaultConfig(Losers losers) {
        Objects.requireNonNull(losers, "losers must not be null");
        HedgeConfig.Builder config = HedgeConfig.builder().budgetRatio(0.05);
        // budget feedback, as HedgeConfig.Builder#maxExtraLoad: the delay rises while the budget runs low
        PercentileDelay.Builder delay = DelayPolicy.percentile(0.96).budgetFeedback(true);
        return config.delay(delay.build())
                .errorClassifier(ErrorClassifier.fatalOn(QueryValidationException.class))
                .loserSampling(losers == Losers.LET_FINISH ? 1.0 : 0)
                .build();
    }

    /**
     * @return the executor that runs hedged statements: events, stats, latency, budget. With {@link
     *     Builder#registry(HedgedExecutorRegistry)}, the registry's executor of the session's name now
     *     (it changes when the registry's is replaced)
     */
    public HedgedExecutor executor() {
        return registry == null ? executor : registry.executor(name, config);
    }

    /** @return the wrapped session */
    public CqlSession getDelegate() {
        return delegate;
    }

    /** @return hedgeable statements that could not be routed to their replicas, since creation */
    public long unroutableCount() {
        return unroutableCount.sum();
    }

    /**
     * @param node a node
     * @return whether latency-aware ordering counts it slow now: it goes to the back of plans, except
     *     that a plan moves at most half its candidates there, the slowest
     */
    public boolean isExcluded(Node node) {
        return ordering && scores.isExcluded(node);
    }

    // ------------------------------------------------------------------ the hedged path

    /** The result type of {@code executeReactive}, as the driver's reactive processor declares it. */
    private static final GenericType<ReactiveResultSet> REACTIVE = GenericType.of(ReactiveResultSet.class);

    @Override
    @SuppressWarnings("unchecked")
    public <RequestT extends Request, ResultT> ResultT execute(RequestT request, GenericType<ResultT> resultType) {
        if (request instanceof Statement) {
            if (Statement.ASYNC.equals(resultType)) {
                return (ResultT) executeHedged((Statement<?>) request);
            }
            if (Statement.SYNC.equals(resultType)) {
                return (ResultT) new BlockingResultSet(BlockingResultSet.await(executeHedged((Statement<?>) request)));
            }
            if (REACTIVE.equals(resultType)) {
                Statement<?> statement = (Statement<?>) request;
                return (ResultT) new HedgedReactiveResultSet(() -> executeHedged(statement));
            }
        }
        return delegate.execute(request, resultType);
    }

    private CompletionStage<AsyncResultSet> executeHedged(Statement<?> statement) {
        if (statement.getNode() != null) {
            return delegate.executeAsync(statement); // the caller chose the node
        }
        DriverExecutionProfile profile = Statements.profile(statement, delegate.getContext());
        if (!Statements.hedgeable(statement, profile, inferIdempotence)) {
            nonIdempotentLog.log("not hedged: non-idempotent statement ({} more since the last line); declare"
                    + " statements that may run twice with Statement.setIdempotent(true) or"
                    + " basic.request.default-idempotence = true");
            return executor().executeAsync(options(false, profile, statement), ctx -> delegate.executeAsync(statement));
        }
        List<Node> candidates = candidates(statement, profile);
        if (candidates.isEmpty()) {
            return delegate.executeAsync(statement); // no node: the driver reports it as it always did
        }
        HedgedExecutor executor = executor();
        CallOptions.Builder options = callOptions(true, profile, statement)
                // the driver's errors that every replica would answer alike end the call, whatever the
                // executor's classifier; it decides the others
                .errorClassifier(DriverErrors.classifier(executor.config().errorClassifier()));
        // the request timeout bounds the call, as it bounds one execute() of the driver: hedges and
        // retries happen inside it, and the call ends at it with the driver's DriverTimeoutException
        Duration timeout = callTimeout(Statements.requestTimeout(statement, profile), executor.config());
        if (timeout == null) {
            return executor.executeAsync(options.build(), ctx -> attempt(ctx, statement, candidates));
        }
        options.deadline(timeout);
        return DriverErrors.reportDeadlineAsTimeout(
                executor.executeAsync(options.build(), ctx -> attempt(ctx, statement, candidates)), timeout);
    }

    /**
     * @return the call's deadline: the driver's request timeout, or the executor's own deadline when
     *     shorter; null when neither is set
     */
    private static Duration callTimeout(Duration requestTimeout, HedgeConfig config) {
        Duration own = config.deadline().orElse(null);
        if (requestTimeout.isNegative() || requestTimeout.isZero()) {
            return own; // no request timeout, as in the driver
        }
        Duration timeout = requestTimeout.compareTo(MAX_DEADLINE) > 0 ? MAX_DEADLINE : requestTimeout;
        return own != null && own.compareTo(timeout) < 0 ? own : timeout;
    }

    private CallOptions options(boolean idempotent, DriverExecutionProfile profile, Statement<?> statement) {
        return callOptions(idempotent, profile, statement).build();
    }

    private CallOptions.Builder callOptions(
            boolean idempotent, DriverExecutionProfile profile, Statement<?> statement) {
        CallOptions.Builder b = CallOptions.builder().idempotent(idempotent).operation(profile.getName());
        if (statementText) {
            String text = Statements.queryText(statement);
            b.details(() -> text == null ? statement.getClass().getSimpleName() : text);
        }
        return b;
    }

    private List<Node> candidates(Statement<?> statement, DriverExecutionProfile profile) {
        DriverContext context = delegate.getContext();
        Queue<Node> plan = context.getLoadBalancingPolicy(profile.getName()).newQueryPlan(statement, delegate);
        List<Node> ordered = new ArrayList<>(4);
        for (Node n = plan.poll(); n != null; n = plan.poll()) {
            ordered.add(n);
        }
        Set<Node> replicas = Statements.replicas(statement, delegate);
        List<Node> candidates = ordered;
        if (!replicas.isEmpty()) {
            candidates = new ArrayList<>(replicas.size());
            for (Node n : ordered) {
                if (replicas.contains(n)) {
                    candidates.add(n);
                }
            }
        }
        if (replicas.isEmpty() || candidates.isEmpty()) {
            unroutableCount.increment();
            if (unroutable == Unroutable.NOT_HEDGED) {
                return ordered.isEmpty() ? ordered : ordered.subList(0, 1);
            }
            candidates = ordered;
        }
        return ordering ? scores.order(candidates) : candidates;
    }

    private CompletionStage<AsyncResultSet> attempt(AttemptContext ctx, Statement<?> statement, List<Node> candidates) {
        int n = ctx.attemptNumber();
        if (closing && n > 1) {
            // a hedge or a retry of a call the closing session failed: sending it could reach a node
            // whose connection is not closed yet
            ctx.stopFurtherAttempts(NotHedged.Reason.CLIENT_CLOSING);
            return CompletableFuture.failedFuture(new IllegalStateException("Session is closing"));
        }
        if (n >= candidates.size()) {
            // every replica has been tried: a hedge to one of them is waste
            ctx.stopFurtherAttempts(NotHedged.Reason.NO_UNTRIED_TARGET);
        }
        if (n > candidates.size()) {
            return CompletableFuture.failedFuture(new NoNodeAvailableException());
        }
        Node node = candidates.get(n - 1);
        if (n == 1) {
            scores.primaryPlaced(node);
        } else if (n == 2) {
            scores.primaryOverdue(candidates.get(0)); // the first hedge: the primary is late or failed
        }
        ctx.reportTarget(Statements.target(node));
        Statement<?> pinned = statement.setNode(node);
        CompletionStage<AsyncResultSet> stage = measured(node, pinned);
        if (losers == Losers.DROP) {
            ctx.onCancel(() -> stage.toCompletableFuture().cancel(true)); // the driver drops it
        }
        // the executor cancels the stage an attempt returns when it loses: with LET_FINISH it gets a
        // copy, so the driver's request runs to the end and its latency is measured. Later pages go
        // to the node that answered, or through the driver's plan when it cannot take them
        return stage.thenApply(rs -> new FailoverPages(rs, delegate));
    }

    /**
     * Executes a pinned statement and tells latency-aware ordering about it: the attempt in flight
     * (stall detection) and, when it ends, its latency if that measures the node.
     */
    private CompletionStage<AsyncResultSet> measured(Node node, Statement<?> pinned) {
        long start = System.nanoTime();
        scores.started(node);
        CompletionStage<AsyncResultSet> stage;
        try {
            stage = delegate.executeAsync(pinned);
        } catch (RuntimeException e) {
            scores.ended(node);
            throw e;
        }
        stage.whenComplete((rs, error) -> {
            scores.ended(node);
            Throwable e = error instanceof CompletionException ? error.getCause() : error;
            // successes and the coordinator's timeouts measure the node; a loser cancelled (with
            // DROP) or a request the driver gave up on only bound its latency from below; fast
            // failures say nothing about it
            long took = System.nanoTime() - start;
            if (e == null || e instanceof ReadTimeoutException || e instanceof WriteTimeoutException) {
                scores.record(node, took);
            } else if (e instanceof CancellationException || e instanceof DriverTimeoutException) {
                scores.recordCensored(node, took);
            }
        });
        return stage;
    }

    // ------------------------------------------------------------------ plain delegation

    @Override
    public String getName() {
        return delegate.getName();
    }

    @Override
    public Metadata getMetadata() {
        return delegate.getMetadata();
    }

    @Override
    public boolean isSchemaMetadataEnabled() {
        return delegate.isSchemaMetadataEnabled();
    }

    @Override
    public CompletionStage<Metadata> setSchemaMetadataEnabled(Boolean newValue) {
        return delegate.setSchemaMetadataEnabled(newValue);
    }

    @Override
    public CompletionStage<Metadata> refreshSchemaAsync() {
        return delegate.refreshSchemaAsync();
    }

    @Override
    public CompletionStage<Boolean> checkSchemaAgreementAsync() {
        return delegate.checkSchemaAgreementAsync();
    }

    @Override
    public DriverContext getContext() {
        return delegate.getContext();
    }

    @Override
    public Optional<CqlIdentifier> getKeyspace() {
        return delegate.getKeyspace();
    }

    @Override
    public Optional<Metrics> getMetrics() {
        return delegate.getMetrics();
    }

    @Override
    public CompletionStage<Void> closeFuture() {
        return delegate.closeFuture();
    }

    @Override
    public CompletionStage<Void> closeAsync() {
        closing = true;
        return delegate.closeAsync();
    }

    @Override
    public CompletionStage<Void> forceCloseAsync() {
        closing = true;
        return delegate.forceCloseAsync();
    }

    @Override
    public String toString() {
        return "HedgedCqlSession{" + name + ", " + delegate.getName() + '}';
    }

    /**
     * Builds a {@link HedgedCqlSession}. Not thread-safe; each {@link #build()} makes a new executor,
     * unless the executor comes from a {@link #registry(HedgedExecutorRegistry) registry}.
     */
    public static final class Builder {
        private final CqlSession delegate;
        private String name = "cassandra";
        private HedgeConfig config; // null: defaultConfig(losers)
        private LatencyAwareOptions latencyAware = LatencyAwareOptions.ofDefaults();
        private boolean inferIdempotence = true;
        private Unroutable unroutable = Unroutable.HEDGE_ACROSS_COORDINATORS;
        private Losers losers = Losers.LET_FINISH;
        private boolean statementText;
        private HedgedExecutorRegistry registry;

        private Builder(CqlSession delegate) {
            this.delegate = Objects.requireNonNull(delegate, "session must not be null");
        }

        /**
         * @param name the executor's name (metrics tag {@code name}, events, logs); default {@code cassandra}
         * @return this
         */
        public Builder name(String name) {
            Objects.requireNonNull(name, "name must not be null");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank, was '" + name + "'");
            }
            this.name = name;
            return this;
        }

        /**
         * @param config delay policy, budget, attempts, scheduler... ({@link #defaultConfig(Losers)}
         *     for the chosen losers mode by default); {@code maxAttempts} above the replication factor is harmless: no replica is
         *     tried twice
         * @return this
         */
        public Builder hedgeConfig(HedgeConfig config) {
            this.config = Objects.requireNonNull(config, "hedgeConfig must not be null");
            return this;
        }

        /**
         * @param options latency-aware ordering of replicas; {@link LatencyAwareOptions#disabled()} turns it off
         * @return this
         */
        public Builder latencyAware(LatencyAwareOptions options) {
            this.latencyAware = Objects.requireNonNull(options, "latencyAware must not be null");
            return this;
        }

        /**
         * @param infer whether undeclared plain SELECTs count as idempotent; default true
         * @return this
         */
        public Builder inferIdempotence(boolean infer) {
            this.inferIdempotence = infer;
            return this;
        }

        /**
         * @param unroutable what to do with hedgeable statements that have no known replicas
         * @return this
         */
        public Builder unroutable(Unroutable unroutable) {
            this.unroutable = Objects.requireNonNull(unroutable, "unroutable must not be null");
            return this;
        }

        /**
         * @param losers whether losing attempts finish in the driver or are dropped
         * @return this
         */
        public Builder losers(Losers losers) {
            this.losers = Objects.requireNonNull(losers, "losers must not be null");
            return this;
        }

        /**
         * @param include whether events carry each statement's CQL text as details (for a slow-call
         *     log built with {@code includeDetails(true)}); never bound values; default false
         * @return this
         */
        public Builder statementTextInDetails(boolean include) {
            this.statementText = include;
            return this;
        }

        /**
         * Takes the session's executor from a registry instead of building one: on every statement
         * the session runs on {@code registry.executor(name, hedgeConfig)}, i.e. the registry's
         * executor of the session's {@link #name(String) name}, created from {@link
         * #hedgeConfig(HedgeConfig)} (or the default one) only if the registry has none of that name. So the executor is
         * listed with the registry's others (a {@code HedgeRegistryMetrics} or an application's
         * endpoint sees it), and when the registry's executor is {@linkplain
         * HedgedExecutorRegistry#replace replaced} (reconfigured at runtime) the next statement runs
         * on the new one; statements already running finish on the old one. An executor already in
         * the registry under that name is used as is, whatever {@code hedgeConfig} says: give each
         * session sharing a registry its own name. Latency-aware ordering reads the ticker of the
         * executor present when the session is built.
         *
         * @param registry where the executor lives; null (the default) for an executor of the
         *     session's own, built from {@code hedgeConfig}
         * @return this
         */
        public Builder registry(HedgedExecutorRegistry registry) {
            this.registry = registry;
            return this;
        }

        /** @return the hedged session */
        public HedgedCqlSession build() {
            return new HedgedCqlSession(this);
        }
    }
}

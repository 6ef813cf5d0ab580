package io.github.hedge.cassandra;

import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import com.datastax.oss.driver.api.core.context.DriverContext;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.loadbalancing.LoadBalancingPolicy;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.session.Request;
import com.datastax.oss.driver.api.core.session.Session;
import com.datastax.oss.driver.api.core.specex.SpeculativeExecutionPolicy;
import com.datastax.oss.driver.api.core.tracker.RequestTracker;
import io.github.hedge.cassandra.internal.HedgeQueryPlan;
import io.github.hedge.cassandra.internal.HedgeRequestTracker;
import io.github.hedge.cassandra.internal.LatencyScores;
import io.github.hedge.cassandra.internal.Options;
import io.github.hedge.cassandra.internal.Statements;
import io.github.hedge.core.spi.Ticker;
import java.lang.reflect.InvocationTargetException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.UUID;

/**
 * A load-balancing policy that wraps another (the driver's {@code DefaultLoadBalancingPolicy} by
 * default) and adds what {@link HedgeSpeculativeExecutionPolicy} needs from the query plan:
 *
 * <ul>
 *   <li>the budget is charged when a speculative execution takes a node from the plan, that is
 *       when it really goes out (see {@link HedgeSpeculativeExecutionPolicy});
 *   <li>a request tracker feeds each answered execution's latency (winners and timeouts: the
 *       driver reports nothing for cancelled losers) to the profile's speculative policy;
 *   <li>by default ({@code basic.load-balancing-policy.hedge.latency-aware = false} turns it off),
 *       latency-aware ordering ({@link LatencyAwareOptions}): a node far slower than its peers goes to the back of
 *       the plan, so primaries stop going to it and speculative executions go to healthy nodes.
 *       When a speculative execution fires, the primary's node is known to have taken at least
 *       that long, and that lower bound is recorded for it too.
 * </ul>
 *
 * <pre>
 * basic.load-balancing-policy {
 *   class = io.github.hedge.cassandra.HedgeLoadBalancingPolicy
 *   local-datacenter = dc1                 # read by the wrapped policy, as before
 *   # hedge.latency-aware = true           # the default, as in the wrapped session
 * }
 * </pre>
 *
 * <p>The speculative poll is recognised by the thread it runs on, the driver's timer thread
 * ({@code <session name>-timer-N}); a custom {@code NettyOptions} that renames that thread makes
 * every speculative execution go out uncharged. Thread-safe.
 */
public class HedgeLoadBalancingPolicy implements LoadBalancingPolicy {
    private static final String DEFAULT_DELEGATE =
            "com.datastax.oss.driver.internal.core.loadbalancing.DefaultLoadBalancingPolicy";

    /**
     * The time source of the latency scores of policies built from now on: the system's; tests in
     * this package replace it to let a retry period pass without waiting for it.
     */
    static volatile Ticker ticker = Ticker.system();

    private final DriverContext context;
    private final LoadBalancingPolicy delegate;
    /** Per-node latency, for ordering (when on) and for {@link #isExcluded}. */
    private final LatencyScores<Node> scores;

    private final boolean ordering;
    private final String timerThreadPrefix;
    private final RequestTracker tracker;

    /**
     * The constructor the driver calls.
     *
     * @param context the session's context
     * @param profileName the profile this instance is built for
     * @throws IllegalArgumentException naming the setting and the value, when an option is invalid
     */
    public HedgeLoadBalancingPolicy(DriverContext context, String profileName) {
        this.context = context;
        DriverExecutionProfile p = context.getConfig().getProfile(profileName);
        this.delegate = newDelegate(
                context, profileName, Options.getString(p, HedgeDriverOption.LBP_DELEGATE_CLASS, DEFAULT_DELEGATE));
        // on by default, as in the wrapped session: without it a new session keeps sending a third of
        // its primaries to a node that answers every request late, and the budget hedges only some
        this.ordering = Options.getBoolean(p, HedgeDriverOption.LBP_LATENCY_AWARE, true);
        LatencyAwareOptions la = LatencyAwareOptions.builder()
                .exclusionThreshold(
                        Options.getDouble(p, HedgeDriverOption.LBP_EXCLUSION_THRESHOLD, 2.0, 1.0, true, 1000.0, false))
                .scale(Options.getDuration(p, HedgeDriverOption.LBP_SCALE, Duration.ofMillis(100), false))
                .retryPeriod(Options.getDuration(p, HedgeDriverOption.LBP_RETRY_PERIOD, Duration.ofSeconds(10), false))
                .minMeasurements(Options.getInt(p, HedgeDriverOption.LBP_MIN_MEASUREMENTS, 5, 1, 100_000))
                .build();
        this.scores = LatencyScores.of(la, ticker);
        this.timerThreadPrefix = context.getSessionName() + "-timer-";
        this.tracker = new HedgeRequestTracker(
                context, this, scores, delegate.getRequestTracker().orElse(null));
    }

    private static LoadBalancingPolicy newDelegate(DriverContext context, String profileName, String className) {
        String name = className.contains(".")
                ? className
                : "com.datastax.oss.driver.internal.core.loadbalancing." + className;
        if (name.equals(HedgeLoadBalancingPolicy.class.getName())) {
            throw new IllegalArgumentException(HedgeDriverOption.LBP_DELEGATE_CLASS.getPath()
                    + " must name another load-balancing policy, was " + className);
        }
        try {
            Class<?> type = Class.forName(name, true, HedgeLoadBalancingPolicy.class.getClassLoader());
            return (LoadBalancingPolicy)
                    type.getConstructor(DriverContext.class, String.class).newInstance(context, profileName);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            throw cause instanceof RuntimeException ? (RuntimeException) cause : new IllegalStateException(cause);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException(
                    HedgeDriverOption.LBP_DELEGATE_CLASS.getPath()
                            + " must name a LoadBalancingPolicy with a (DriverContext, String) constructor, was "
                            + className,
                    e);
        }
    }

    /** @return the wrapped policy */
    public LoadBalancingPolicy getDelegate() {
        return delegate;
    }

    /**
     * @param node a node
     * @return whether latency-aware ordering counts it slow now (false when off): it goes to the back
     *     of plans, except that a plan moves at most half its candidates there, the slowest
     */
    public boolean isExcluded(Node node) {
        return ordering && scores.isExcluded(node);
    }

    @Override
    public Optional<RequestTracker> getRequestTracker() {
        return Optional.of(tracker);
    }

    @Override
    public void init(Map<UUID, Node> nodes, DistanceReporter distanceReporter) {
        delegate.init(nodes, distanceReporter);
    }

    @Override
    public Queue<Node> newQueryPlan(Request request, Session session) {
        Queue<Node> plan = delegate.newQueryPlan(request, session);
        if (ordering) {
            List<Node> nodes = new ArrayList<>(4);
            for (Node n = plan.poll(); n != null; n = plan.poll()) {
                nodes.add(n);
            }
            plan = new ArrayDeque<>(scores.order(nodes)) {
                @Override
                public synchronized Node poll() {
                    return super.poll();
                }

                @Override
                public synchronized Node peek() {
                    return super.peek();
                }
            };
        }
        if (request == null) {
            return plan;
        }
        DriverExecutionProfile profile = Statements.profile(request, context);
        SpeculativeExecutionPolicy specex = context.getSpeculativeExecutionPolicy(profile.getName());
        if (!(specex instanceof HedgeSpeculativeExecutionPolicy)) {
            return plan;
        }
        HedgeSpeculativeExecutionPolicy hedge = (HedgeSpeculativeExecutionPolicy) specex;
        boolean idempotent =
                request instanceof Statement && Statements.driverIdempotence((Statement<?>) request, profile);
        return new HedgeQueryPlan(
                plan,
                new HedgeQueryPlan.Listener() {
                    @Override
                    public void onPrimary(Node node) {
                        scores.primaryPlaced(node);
                        if (idempotent) {
                            hedge.onPrimary();
                        }
                    }

                    @Override
                    public boolean onSpeculative(int attemptNumber, Node primary, long sincePrimaryNanos) {
                        if (primary != null && attemptNumber == 2) {
                            // censored: it ran at least this long (once per primary, so a third
                            // execution does not count as a second race the node lost)
                            scores.recordCensored(primary, sincePrimaryNanos);
                            scores.primaryOverdue(primary);
                        }
                        return hedge.onSpeculativeExecution(attemptNumber);
                    }
                },
                timerThreadPrefix);
    }

    @Override
    public void onAdd(Node node) {
        delegate.onAdd(node);
    }

    @Override
    public void onUp(Node node) {
        delegate.onUp(node);
    }

    @Override
    public void onDown(Node node) {
        delegate.onDown(node);
    }

    @Override
    public void onRemove(Node node) {
        if (scores != null) {
            scores.forget(node);
        }
        delegate.onRemove(node);
    }

    @Override
    public void close() {
        delegate.close();
    }
}

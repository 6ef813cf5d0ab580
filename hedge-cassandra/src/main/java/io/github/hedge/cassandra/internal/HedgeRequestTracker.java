package io.github.hedge.cassandra.internal;

import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import com.datastax.oss.driver.api.core.context.DriverContext;
import com.datastax.oss.driver.api.core.loadbalancing.LoadBalancingPolicy;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.servererrors.ReadTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.session.Request;
import com.datastax.oss.driver.api.core.session.Session;
import com.datastax.oss.driver.api.core.specex.SpeculativeExecutionPolicy;
import com.datastax.oss.driver.api.core.tracker.RequestTracker;
import io.github.hedge.core.LatencyTracker;
import java.util.Objects;

/**
 * Feeds each answered execution's own latency (the driver measures it from that execution's
 * write) to the profile's speculative policy's {@link LatencyTracker}, per node, and to the
 * load-balancing policy's latency scores. Winners and timeouts only: the driver cancels losers'
 * callbacks, so their latency is never reported (censoring). A coordinator's read or write timeout
 * is an answer and measures the node; the driver's own request timeout only bounds the node's
 * latency from below and is recorded as censored. Forwards every callback to the
 * wrapped policy's own tracker (the default policy's slow-replica avoidance needs it).
 *
 * <p>The driver gives every load-balancing policy's tracker every request; this one handles only
 * requests whose profile uses its policy. Thread-safe.
 */
public final class HedgeRequestTracker implements RequestTracker {
    private final DriverContext context;
    private final LoadBalancingPolicy owner;
    private final LatencyScores<Node> scores;
    private final RequestTracker delegate;

    /**
     * @param context the session's context
     * @param owner the load-balancing policy that supplies this tracker
     * @param scores its latency scores (recorded with ordering on or off), not null
     * @param delegate the wrapped policy's tracker, or null
     */
    public HedgeRequestTracker(
            DriverContext context, LoadBalancingPolicy owner, LatencyScores<Node> scores, RequestTracker delegate) {
        this.context = context;
        this.owner = owner;
        this.scores = Objects.requireNonNull(scores, "scores must not be null");
        this.delegate = delegate;
    }

    private void measure(DriverExecutionProfile profile, Node node, long latencyNanos, boolean censored) {
        if (context.getLoadBalancingPolicy(profile.getName()) != owner) {
            return;
        }
        if (censored) {
            scores.recordCensored(node, latencyNanos);
        } else {
            scores.record(node, latencyNanos);
        }
        SpeculativeExecutionPolicy specex = context.getSpeculativeExecutionPolicy(profile.getName());
        if (specex instanceof io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy) {
            LatencyTracker t = ((io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy) specex).latencyTracker();
            if (censored) {
                t.recordCensored(Statements.target(node), latencyNanos);
            } else {
                // the driver measures on System.nanoTime, the policy's tracker's ticker
                long end = System.nanoTime();
                t.recordAnswer(Statements.target(node), end - latencyNanos, end);
            }
        }
    }

    @Override
    public void onNodeSuccess(
            Request request, long latencyNanos, DriverExecutionProfile profile, Node node, String logPrefix) {
        measure(profile, node, latencyNanos, false);
        if (delegate != null) {
            delegate.onNodeSuccess(request, latencyNanos, profile, node, logPrefix);
        }
    }

    @Override
    public void onNodeError(
            Request request,
            Throwable error,
            long latencyNanos,
            DriverExecutionProfile profile,
            Node node,
            String logPrefix) {
        if (error instanceof DriverTimeoutException) {
            // the driver gave up: the node took at least this long (censored)
            measure(profile, node, latencyNanos, true);
        } else if (error instanceof ReadTimeoutException || error instanceof WriteTimeoutException) {
            // the coordinator answered, late: a complete measurement of the node
            measure(profile, node, latencyNanos, false);
        }
        if (delegate != null) {
            delegate.onNodeError(request, error, latencyNanos, profile, node, logPrefix);
        }
    }

    @Override
    public void onSuccess(
            Request request, long latencyNanos, DriverExecutionProfile profile, Node node, String logPrefix) {
        if (delegate != null) {
            delegate.onSuccess(request, latencyNanos, profile, node, logPrefix);
        }
    }

    @Override
    public void onError(
            Request request,
            Throwable error,
            long latencyNanos,
            DriverExecutionProfile profile,
            Node node,
            String logPrefix) {
        if (delegate != null) {
            delegate.onError(request, error, latencyNanos, profile, node, logPrefix);
        }
    }

    @Override
    public void onSessionReady(Session session) {
        if (delegate != null) {
            delegate.onSessionReady(session);
        }
    }

    @Override
    public void close() throws Exception {
        if (delegate != null) {
            delegate.close();
        }
    }
}

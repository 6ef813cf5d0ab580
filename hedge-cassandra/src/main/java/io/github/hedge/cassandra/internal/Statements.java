package io.github.hedge.cassandra.internal;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import com.datastax.oss.driver.api.core.context.DriverContext;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.TokenMap;
import com.datastax.oss.driver.api.core.metadata.token.Token;
import com.datastax.oss.driver.api.core.session.Request;
import com.datastax.oss.driver.api.core.session.Session;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/** What hedge needs to know about a request: its profile, idempotence, replicas. Stateless. */
public final class Statements {
    private Statements() {}

    /**
     * The execution profile of a request, resolved as the driver does.
     *
     * @param request the request
     * @param context the session's context
     * @return the profile
     */
    public static DriverExecutionProfile profile(Request request, DriverContext context) {
        DriverExecutionProfile p = request.getExecutionProfile();
        if (p != null) {
            return p;
        }
        String name = request.getExecutionProfileName();
        return name == null
                ? context.getConfig().getDefaultProfile()
                : context.getConfig().getProfile(name);
    }

    /**
     * The request timeout as the driver resolves it: the statement's own, else the profile's {@code
     * basic.request.timeout}.
     *
     * @param statement the statement
     * @param profile its profile
     * @return the timeout; zero or negative means none, as in the driver
     */
    public static Duration requestTimeout(Statement<?> statement, DriverExecutionProfile profile) {
        Duration own = statement.getTimeout();
        return own != null ? own : profile.getDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ZERO);
    }

    /**
     * Idempotence as the driver resolves it: the statement's own flag, else the profile's
     * {@code basic.request.default-idempotence}.
     *
     * @param statement the statement
     * @param profile its profile
     * @return whether the driver considers it idempotent
     */
    public static boolean driverIdempotence(Statement<?> statement, DriverExecutionProfile profile) {
        Boolean declared = statement.isIdempotent();
        return declared != null ? declared : profile.getBoolean(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE, false);
    }

    /**
     * Whether a statement may be run more than once: its own flag when set; else the profile's
     * default idempotence when that is true; else, with {@code infer}, only a plain {@code SELECT}.
     * Never inferred for anything that writes (a counter update, an LWT, a list append, a batch,
     * a {@code now()} in an INSERT all change their result when run twice).
     *
     * @param statement the statement
     * @param profile its profile
     * @param infer whether to infer idempotence for undeclared plain SELECTs
     * @return whether hedging it is safe
     */
    public static boolean hedgeable(Statement<?> statement, DriverExecutionProfile profile, boolean infer) {
        Boolean declared = statement.isIdempotent();
        if (declared != null) {
            return declared;
        }
        if (profile.getBoolean(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE, false)) {
            return true;
        }
        return infer && isPlainSelect(queryText(statement));
    }

    /**
     * @param statement a statement
     * @return its CQL text (a batch has none), never bound values; {@code null} if unknown
     */
    public static String queryText(Statement<?> statement) {
        if (statement instanceof SimpleStatement) {
            return ((SimpleStatement) statement).getQuery();
        }
        if (statement instanceof BoundStatement) {
            return ((BoundStatement) statement).getPreparedStatement().getQuery();
        }
        return null;
    }

    /**
     * @param cql CQL text, or {@code null}
     * @return whether it is a SELECT (after leading blanks and comments)
     */
    public static boolean isPlainSelect(String cql) {
        if (cql == null) {
            return false;
        }
        int i = 0;
        int n = cql.length();
        while (i < n) {
            char c = cql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (cql.startsWith("--", i) || cql.startsWith("//", i)) {
                int eol = cql.indexOf('\n', i);
                i = eol < 0 ? n : eol + 1;
            } else if (cql.startsWith("/*", i)) {
                int end = cql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
            } else {
                break;
            }
        }
        return cql.regionMatches(true, i, "SELECT", 0, 6)
                && (i + 6 == n || !Character.isLetterOrDigit(cql.charAt(i + 6)) && cql.charAt(i + 6) != '_');
    }

    /**
     * The replicas of a request's partition, resolving the keyspace as the driver's
     * {@code BasicLoadBalancingPolicy} does (request keyspace, routing keyspace, session keyspace).
     *
     * @param request the request
     * @param session the session
     * @return the replicas; empty when the request cannot be routed (no token map, no keyspace, no
     *     routing key or token, or a keyspace whose replication is unknown)
     */
    public static Set<Node> replicas(Request request, Session session) {
        Optional<TokenMap> tokenMap = session.getMetadata().getTokenMap();
        if (tokenMap.isEmpty()) {
            return Set.of();
        }
        try {
            CqlIdentifier keyspace = request.getKeyspace();
            if (keyspace == null) {
                keyspace = request.getRoutingKeyspace();
            }
            if (keyspace == null && session.getKeyspace().isPresent()) {
                keyspace = session.getKeyspace().get();
            }
            if (keyspace == null) {
                return Set.of();
            }
            Token token = request.getRoutingToken();
            if (token != null) {
                return tokenMap.get().getReplicas(keyspace, token);
            }
            ByteBuffer key = request.getRoutingKey();
            return key == null ? Set.of() : tokenMap.get().getReplicas(keyspace, key);
        } catch (RuntimeException e) {
            // a request implementation that throws from a getter: treat as unroutable
            return Set.of();
        }
    }

    /**
     * @param node a node
     * @return a low-cardinality name for it, "127.0.0.1:9042"
     */
    public static String target(Node node) {
        SocketAddress address = node.getEndPoint().resolve();
        if (address instanceof InetSocketAddress) {
            InetSocketAddress inet = (InetSocketAddress) address;
            return inet.getHostString() + ":" + inet.getPort();
        }
        return String.valueOf(address);
    }
}

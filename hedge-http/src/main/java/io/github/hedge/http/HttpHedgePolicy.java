package io.github.hedge.http;

import io.github.hedge.http.internal.Checks;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.AntPathMatcher;

/**
 * Which HTTP requests may be hedged and what counts as a failed attempt. Immutable and thread-safe;
 * build it with {@link #builder()}, or take {@link #defaults()}.
 *
 * <p>A request may run more than once (be hedged) when any of these holds, checked in this order:
 *
 * <ol>
 *   <li>its request attribute {@value #IDEMPOTENT_ATTRIBUTE} is set: {@code true} hedges it, {@code
 *       false} runs it exactly once, whatever the method;
 *   <li>it carries an {@code Idempotency-Key} header (the name is a setting);
 *   <li>its method and path match an {@linkplain Builder#idempotentRoute idempotent route};
 *   <li>its method is one of {@link #hedgedMethods()}: by default GET, HEAD, OPTIONS, PUT and
 *       DELETE, the idempotent methods of RFC 9110 section 9.2.2 (TRACE left out).
 * </ol>
 *
 * Any other request (a POST or PATCH by default) runs exactly once: the executor reports it as not
 * hedged, reason {@code NON_IDEMPOTENT}.
 *
 * <p>A response whose status is 5xx, or in {@link #retryableStatuses()}, is a failed attempt: it
 * never wins while another attempt is in flight. A status in {@code retryableStatuses} (by default
 * 500, 502, 503 and 504) starts the next attempt at once, budget permitting; another 5xx (501, 505,
 * ...) says the request itself cannot succeed and ends the call at once. When every attempt failed,
 * the caller gets the primary's response, as without hedging. Every other status (2xx, 3xx, 4xx) is
 * a success and wins.
 *
 * <p>A request body longer than {@link #maxHedgedRequestBytes()} bytes is not hedged (and is counted);
 * a shorter one is held in memory until the call ends, so every attempt sends the same bytes.
 */
public final class HttpHedgePolicy {
    /**
     * The request attribute that marks a request idempotent ({@code Boolean.TRUE}) or not ({@code
     * Boolean.FALSE}), overriding the method, header and routes: {@code
     * webClient.post().attribute(HttpHedgePolicy.IDEMPOTENT_ATTRIBUTE, true)}.
     */
    public static final String IDEMPOTENT_ATTRIBUTE = "io.github.hedge.http.idempotent";

    /** The default header whose presence marks a request idempotent. */
    public static final String IDEMPOTENCY_KEY = "Idempotency-Key";

    /** The largest value of {@link Builder#maxHedgedRequestBytes}. */
    public static final int MAX_REQUEST_BYTES_LIMIT = Integer.MAX_VALUE;

    private static final AntPathMatcher PATHS = new AntPathMatcher();
    private static final HttpHedgePolicy DEFAULTS = builder().build();

    private final Set<HttpMethod> hedgedMethods;
    private final List<Route> idempotentRoutes;
    private final String idempotencyKeyHeader;
    private final Set<Integer> retryableStatuses;
    private final int maxHedgedRequestBytes;

    /**
     * A method and an Ant-style path pattern ({@code /orders/**}) whose requests may be hedged.
     *
     * @param method the HTTP method
     * @param pathPattern the path pattern, matched against the request URI's path
     */
    public record Route(HttpMethod method, String pathPattern) {
        /**
         * @param method the HTTP method
         * @param pathPattern the path pattern, starting with {@code /}
         */
        public Route {
            Objects.requireNonNull(method, "method must not be null");
            Objects.requireNonNull(pathPattern, "pathPattern must not be null");
            if (!pathPattern.startsWith("/")) {
                throw new IllegalArgumentException("pathPattern must start with '/', was " + pathPattern);
            }
        }

        /**
         * @param route {@code "POST /orders/**"}: a method name, a space, a path pattern
         * @return the route
         * @throws IllegalArgumentException if it is not of that form
         */
        public static Route parse(String route) {
            String r = Objects.requireNonNull(route, "route must not be null").trim();
            int space = r.indexOf(' ');
            if (space <= 0 || !r.substring(space + 1).trim().startsWith("/")) {
                throw new IllegalArgumentException("route must be \"METHOD /path/pattern\", was " + route);
            }
            return new Route(
                    HttpMethod.valueOf(r.substring(0, space).toUpperCase(Locale.ROOT)),
                    r.substring(space + 1).trim());
        }

        boolean matches(HttpMethod m, String path) {
            return method.equals(m) && PATHS.match(pathPattern, path == null || path.isEmpty() ? "/" : path);
        }

        @Override
        public String toString() {
            return method.name() + " " + pathPattern;
        }
    }

    private HttpHedgePolicy(Builder b) {
        this.hedgedMethods = Set.copyOf(b.hedgedMethods);
        this.idempotentRoutes = List.copyOf(b.idempotentRoutes);
        this.idempotencyKeyHeader = b.idempotencyKeyHeader;
        this.retryableStatuses = Set.copyOf(b.retryableStatuses);
        this.maxHedgedRequestBytes = b.maxHedgedRequestBytes;
    }

    /** @return the defaults described in the class comment */
    public static HttpHedgePolicy defaults() {
        return DEFAULTS;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the methods hedged without any mark */
    public Set<HttpMethod> hedgedMethods() {
        return hedgedMethods;
    }

    /** @return routes whose requests are hedged whatever their method */
    public List<Route> idempotentRoutes() {
        return idempotentRoutes;
    }

    /** @return the header whose presence marks a request idempotent, or null for none */
    public String idempotencyKeyHeader() {
        return idempotencyKeyHeader;
    }

    /** @return the statuses that fail an attempt and start the next one at once */
    public Set<Integer> retryableStatuses() {
        return retryableStatuses;
    }

    /** @return the largest request body, in bytes, that is hedged */
    public int maxHedgedRequestBytes() {
        return maxHedgedRequestBytes;
    }

    /**
     * @param method the request's method
     * @param path the request URI's path
     * @param headers its headers
     * @param attributes its attributes
     * @return whether the request may run more than once, by the rules of the class comment
     */
    public boolean isIdempotent(HttpMethod method, String path, HttpHeaders headers, Map<String, Object> attributes) {
        Object mark = attributes == null ? null : attributes.get(IDEMPOTENT_ATTRIBUTE);
        if (mark instanceof Boolean b) {
            return b;
        }
        if (idempotencyKeyHeader != null && headers != null && headers.containsKey(idempotencyKeyHeader)) {
            return true;
        }
        for (Route r : idempotentRoutes) {
            if (r.matches(method, path)) {
                return true;
            }
        }
        return hedgedMethods.contains(method);
    }

    /**
     * @param status an HTTP status code
     * @return whether a response with it is a failed attempt (5xx, or listed as retryable)
     */
    public boolean isFailure(int status) {
        return (status >= 500 && status <= 599) || retryableStatuses.contains(status);
    }

    /**
     * @param status a failure status
     * @return whether the next attempt should start at once (else the call ends)
     */
    public boolean isRetryable(int status) {
        return retryableStatuses.contains(status);
    }

    @Override
    public String toString() {
        return "HttpHedgePolicy{hedgedMethods=" + hedgedMethods + ", idempotentRoutes=" + idempotentRoutes
                + ", idempotencyKeyHeader=" + idempotencyKeyHeader + ", retryableStatuses=" + retryableStatuses
                + ", maxHedgedRequestBytes=" + maxHedgedRequestBytes + "}";
    }

    /** Builds a policy; validates each value as it is set. Not thread-safe; reusable. */
    public static final class Builder {
        private final Set<HttpMethod> hedgedMethods = new LinkedHashSet<>(
                List.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS, HttpMethod.PUT, HttpMethod.DELETE));
        private final List<Route> idempotentRoutes = new ArrayList<>();
        private String idempotencyKeyHeader = IDEMPOTENCY_KEY;
        private final Set<Integer> retryableStatuses = new LinkedHashSet<>(List.of(500, 502, 503, 504));
        private int maxHedgedRequestBytes = 1 << 20;

        private Builder() {}

        /**
         * @param methods the methods hedged without a mark (replaces the default set)
         * @return this builder
         */
        public Builder hedgedMethods(Collection<HttpMethod> methods) {
            Objects.requireNonNull(methods, "hedgedMethods must not be null");
            methods.forEach(m -> Objects.requireNonNull(m, "hedgedMethods must not contain null"));
            hedgedMethods.clear();
            hedgedMethods.addAll(methods);
            return this;
        }

        /**
         * @param route a route whose requests may be hedged whatever their method
         * @return this builder
         */
        public Builder idempotentRoute(Route route) {
            idempotentRoutes.add(Objects.requireNonNull(route, "route must not be null"));
            return this;
        }

        /**
         * @param method the method
         * @param pathPattern an Ant-style path pattern ({@code /orders/**})
         * @return this builder
         */
        public Builder idempotentRoute(HttpMethod method, String pathPattern) {
            return idempotentRoute(new Route(method, pathPattern));
        }

        /**
         * @param header the header whose presence marks a request idempotent; null or empty for none
         * @return this builder
         */
        public Builder idempotencyKeyHeader(String header) {
            this.idempotencyKeyHeader = header == null || header.isBlank() ? null : header.trim();
            return this;
        }

        /**
         * @param statuses statuses that fail an attempt and start the next one at once, each in [400,
         *     599] (replaces the default 500, 502, 503, 504)
         * @return this builder
         */
        public Builder retryableStatuses(Collection<Integer> statuses) {
            Objects.requireNonNull(statuses, "retryableStatuses must not be null");
            for (Integer s : statuses) {
                if (s == null || s < 400 || s > 599) {
                    throw new IllegalArgumentException("retryableStatuses must be in [400, 599], was " + s);
                }
            }
            retryableStatuses.clear();
            retryableStatuses.addAll(statuses);
            return this;
        }

        /**
         * @param bytes the largest request body that is hedged, in bytes, in [0, 2^31 - 1]; default 1
         *     MiB
         * @return this builder
         */
        public Builder maxHedgedRequestBytes(int bytes) {
            this.maxHedgedRequestBytes = Checks.inRange("maxHedgedRequestBytes", bytes, 0, MAX_REQUEST_BYTES_LIMIT);
            return this;
        }

        /** @return the policy */
        public HttpHedgePolicy build() {
            return new HttpHedgePolicy(this);
        }
    }
}

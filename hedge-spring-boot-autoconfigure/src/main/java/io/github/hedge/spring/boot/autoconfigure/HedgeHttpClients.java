package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.http.HedgingClientHttpRequestInterceptor;
import io.github.hedge.http.HttpHedgePolicy;
import io.github.hedge.http.InstanceChooser;
import io.github.hedge.http.StaticInstanceChooser;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * The HTTP clients configured by {@code hedge.http.*}: for each client (the host of request URIs,
 * {@code users} for {@code http://users/...}) its hedge instance, its {@link HttpHedgePolicy} and,
 * when {@code instances} are listed, a {@link StaticInstanceChooser}; otherwise, with Spring Cloud
 * LoadBalancer, a chooser over the instances it knows for that service id. Requests to a host not listed
 * are not hedged, unless {@code hedge.http.hedge-unlisted} is on: then they run on the instance
 * {@code hedge.http.instance}, to the request's URI. Built once at start (the
 * settings of the hedge instances themselves change at runtime as any instance's do: each request
 * looks its executor up). Invalid values fail the start with {@link InvalidHedgePropertyException}.
 *
 * <p>Thread-safe.
 */
public class HedgeHttpClients {
    /** One client's settings. */
    public record Client(
            String name, boolean enabled, String instance, HttpHedgePolicy policy, InstanceChooser chooser) {}

    private final HedgeInstances instances;
    private final Map<String, Client> clients;
    private final Client fallback;
    private final Map<String, HedgingClientHttpRequestInterceptor> interceptors = new LinkedHashMap<>();
    private final HedgingClientHttpRequestInterceptor fallbackInterceptor;
    private final Map<String, List<LongSupplier>> tooLarge = new LinkedHashMap<>();

    /**
     * @param properties the {@code hedge.*} properties
     * @param instances the named instances whose executors run the requests
     * @throws InvalidHedgePropertyException naming the first invalid {@code hedge.http.*} value
     */
    public HedgeHttpClients(HedgeProperties properties, HedgeInstances instances) {
        this(properties, instances, null);
    }

    /**
     * @param properties the {@code hedge.*} properties
     * @param instances the named instances whose executors run the requests
     * @param services places the attempts of listed clients without {@code instances}, and of {@code
     *     lb://} requests (a chooser over Spring Cloud LoadBalancer's instances), or null
     * @throws InvalidHedgePropertyException naming the first invalid {@code hedge.http.*} value
     */
    public HedgeHttpClients(HedgeProperties properties, HedgeInstances instances, InstanceChooser services) {
        this.instances = instances;
        HedgeProperties.Http http = properties.getHttp();
        if (http.getInstance() == null || http.getInstance().isBlank()) {
            throw new InvalidHedgePropertyException("hedge.http.instance", http.getInstance(), "a non-empty name");
        }
        HttpHedgePolicy base = policy(http, List.of(), "hedge.http.");
        // requests to unlisted hosts pass through unless hedge.http.hedge-unlisted is on
        this.fallback = new Client("*", http.isHedgeUnlisted(), http.getInstance(), base, services);
        Map<String, Client> m = new LinkedHashMap<>();
        http.getClients().forEach((name, c) -> {
            String prefix = "hedge.http.clients." + name + ".";
            String instance = c.getInstance() == null || c.getInstance().isBlank() ? name : c.getInstance();
            HttpHedgePolicy policy = policy(http, c.getIdempotentRoutes(), prefix);
            InstanceChooser chooser = services;
            if (!c.getInstances().isEmpty()) {
                for (URI u : c.getInstances()) {
                    if (u == null || u.getScheme() == null || u.getHost() == null || u.getPort() < 0) {
                        throw new InvalidHedgePropertyException(
                                prefix + "instances", u, "base URIs with scheme, host and port (http://10.0.0.3:8080)");
                    }
                }
                chooser = StaticInstanceChooser.builder()
                        .service(name, c.getInstances())
                        .build();
            }
            m.put(name.toLowerCase(Locale.ROOT), new Client(name, c.isEnabled(), instance, policy, chooser));
        });
        this.clients = Collections.unmodifiableMap(m);
        clients.values().forEach(c -> interceptors.put(c.name(), interceptor(c)));
        this.fallbackInterceptor = interceptor(fallback);
    }

    private HedgingClientHttpRequestInterceptor interceptor(Client c) {
        HedgingClientHttpRequestInterceptor i =
                HedgingClientHttpRequestInterceptor.of(() -> instances.executor(c.instance()), c.policy(), c.chooser());
        countTooLarge(c.instance(), i::requestsTooLarge);
        return i;
    }

    /**
     * Adds a source of the count behind {@link #requestsTooLarge()} (the WebClient filters register theirs).
     *
     * @param instance the hedge instance the requests run on
     * @param count the requests not hedged because their body was over the limit
     */
    public synchronized void countTooLarge(String instance, LongSupplier count) {
        tooLarge.computeIfAbsent(instance, k -> new CopyOnWriteArrayList<>()).add(count);
    }

    /** @return per hedge instance, the requests not hedged because their body was over the limit */
    public synchronized Map<String, Long> requestsTooLarge() {
        Map<String, Long> m = new LinkedHashMap<>();
        tooLarge.forEach(
                (k, v) -> m.put(k, v.stream().mapToLong(LongSupplier::getAsLong).sum()));
        return m;
    }

    /** @return the named instances whose executors run the requests */
    HedgeInstances instances() {
        return instances;
    }

    /** @return the listed clients, keyed by their lower-case host name */
    public Map<String, Client> clients() {
        return clients;
    }

    /** @return the settings of requests to hosts not listed */
    public Client fallback() {
        return fallback;
    }

    /**
     * @param uri a request URI
     * @return the client for its host, or {@link #fallback()}
     */
    public Client clientFor(URI uri) {
        String host = uri.getHost();
        Client c = host == null ? null : clients.get(host.toLowerCase(Locale.ROOT));
        return c != null ? c : fallback;
    }

    /**
     * @return the interceptor Spring Boot's RestClient and RestTemplate builders get: it hands each
     *     request to its client's {@link HedgingClientHttpRequestInterceptor} (or lets it through when
     *     the client is disabled). It must be the last interceptor.
     */
    public ClientHttpRequestInterceptor requestInterceptor() {
        return new Dispatch();
    }

    private final class Dispatch implements ClientHttpRequestInterceptor {
        @Override
        public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
                throws IOException {
            Client c = clientFor(request.getURI());
            if (!c.enabled()) {
                return execution.execute(request, body);
            }
            HedgingClientHttpRequestInterceptor i = c == fallback ? fallbackInterceptor : interceptors.get(c.name());
            return i.intercept(request, body, execution);
        }
    }

    private static HttpHedgePolicy policy(HedgeProperties.Http http, List<String> extraRoutes, String prefix) {
        HttpHedgePolicy.Builder b = HttpHedgePolicy.builder();
        List<HttpMethod> methods = new ArrayList<>();
        for (String m : http.getHedgedMethods()) {
            if (m == null || !m.trim().matches("[A-Za-z]+")) {
                throw new InvalidHedgePropertyException(
                        "hedge.http.hedged-methods", m, "HTTP method names (GET, PUT...)");
            }
            methods.add(HttpMethod.valueOf(m.trim().toUpperCase(Locale.ROOT)));
        }
        b.hedgedMethods(methods);
        b.idempotencyKeyHeader(http.getIdempotencyKeyHeader());
        for (Integer s : http.getRetryableStatuses()) {
            if (s == null || s < 400 || s > 599) {
                throw new InvalidHedgePropertyException("hedge.http.retryable-statuses", s, "statuses in [400, 599]");
            }
        }
        b.retryableStatuses(http.getRetryableStatuses());
        Integer bytes = http.getMaxHedgedRequestBytes();
        if (bytes == null || bytes < 0) {
            throw new InvalidHedgePropertyException(
                    "hedge.http.max-hedged-request-bytes", bytes, "in [0, " + Integer.MAX_VALUE + "]");
        }
        b.maxHedgedRequestBytes(bytes);
        route(b, http.getIdempotentRoutes(), "hedge.http.idempotent-routes");
        route(b, extraRoutes, prefix + "idempotent-routes");
        return b.build();
    }

    private static void route(HttpHedgePolicy.Builder b, List<String> routes, String property) {
        for (String r : routes) {
            try {
                b.idempotentRoute(HttpHedgePolicy.Route.parse(r));
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new InvalidHedgePropertyException(
                        property, r, "routes \"METHOD /ant/path/**\" (POST /orders/**)");
            }
        }
    }
}

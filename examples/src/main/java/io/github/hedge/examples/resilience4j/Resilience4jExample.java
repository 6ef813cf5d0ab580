package io.github.hedge.examples.resilience4j;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.examples.core.Replicas;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * hedge composed with resilience4j, in the order that keeps each tool's meaning:
 *
 * <ul>
 *   <li><b>CircuitBreaker inside hedging, one per replica</b>: each attempt goes through the breaker
 *       of the replica it calls, and the attempt function skips replicas whose breaker is open, so
 *       hedges go where they can succeed. (One breaker around the whole hedged call would only open
 *       when every replica fails, and would count a slow replica's calls as successes.)
 *   <li><b>Retry around hedging</b>: a hedged call fails only when every attempt failed; Retry then
 *       runs the whole hedged call again after a pause. (Retry inside each attempt would make one
 *       attempt last several backoffs and defeat the hedge delay.)
 * </ul>
 *
 * <p>Thread-safe: the executor, breakers and retry are shared by every call.
 */
public final class Resilience4jExample implements AutoCloseable {
    private final Replicas replicas;
    private final HedgedExecutor executor;
    private final Map<String, CircuitBreaker> breakers = new LinkedHashMap<>();
    private final Retry retry;
    private final ScheduledExecutorService retryScheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "retry");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param replicas the replicas to read from
     * @param executor the hedged executor (idempotent by default, since these are reads)
     */
    public Resilience4jExample(Replicas replicas, HedgedExecutor executor) {
        this.replicas = replicas;
        this.executor = executor;
        CircuitBreakerConfig breakerConfig = CircuitBreakerConfig.custom()
                .slidingWindowSize(4)
                .minimumNumberOfCalls(4)
                .failureRateThreshold(50)
                .waitDurationInOpenState(Duration.ofSeconds(30))
                .build();
        for (String name : replicas.names()) {
            breakers.put(name, CircuitBreaker.of("replica-" + name, breakerConfig));
        }
        this.retry = Retry.of(
                "users",
                RetryConfig.custom()
                        .maxAttempts(3)
                        .waitDuration(Duration.ofMillis(50))
                        .build());
    }

    /**
     * @param key what to read
     * @return the first successful answer of up to three hedged calls
     */
    public CompletionStage<String> read(String key) {
        return Retry.decorateCompletionStage(retry, retryScheduler, () -> hedgedRead(key))
                .get();
    }

    private CompletableFuture<String> hedgedRead(String key) {
        return executor.executeAsync(ctx -> {
            String replica = pick(ctx.triedTargets());
            ctx.reportTarget(replica);
            CircuitBreaker breaker = breakers.get(replica);
            return breaker.decorateCompletionStage(() -> replicas.getAsync(replica, key))
                    .get();
        });
    }

    /** A replica not tried by this call whose breaker lets calls through; else any untried one. */
    private String pick(List<String> tried) {
        for (Map.Entry<String, CircuitBreaker> e : breakers.entrySet()) {
            if (!tried.contains(e.getKey()) && e.getValue().getState() != CircuitBreaker.State.OPEN) {
                return e.getKey();
            }
        }
        return replicas.pickExcluding(tried);
    }

    /**
     * @param replica a replica's name
     * @return its circuit breaker
     */
    public CircuitBreaker breaker(String replica) {
        return breakers.get(replica);
    }

    /** @return the retry around each hedged call */
    public Retry retry() {
        return retry;
    }

    @Override
    public void close() {
        retryScheduler.shutdownNow();
    }

    /**
     * A replica that fails trips its breaker, and later calls go straight to the healthy one.
     *
     * @param args unused
     * @throws Exception if a read fails
     */
    public static void main(String[] args) throws Exception {
        Map<String, Duration> delays = new LinkedHashMap<>();
        delays.put("a", Duration.ofMillis(2));
        delays.put("b", Duration.ofMillis(2));
        HedgedExecutor executor = HedgedExecutor.of(
                "users-r4j",
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                        .budget(HedgeBudget.unlimited())
                        .maxAttempts(2)
                        .idempotentByDefault(true)
                        .build());
        try (Replicas replicas = new Replicas(delays);
                Resilience4jExample example = new Resilience4jExample(replicas, executor)) {
            replicas.failing("a", true);
            for (int i = 0; i < 6; i++) {
                System.out.println(example.read("k" + i).toCompletableFuture().get());
            }
            System.out.println("breaker a: " + example.breaker("a").getState() + ", calls " + replicas.calls());
        }
    }
}

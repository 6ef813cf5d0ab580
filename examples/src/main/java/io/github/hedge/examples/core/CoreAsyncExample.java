package io.github.hedge.examples.core;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * hedge-core with an asynchronous client: the attempt function starts a request and returns its
 * future without blocking; a hedge goes to a replica the call has not tried; the loser's future is
 * cancelled. Run it with {@code main}: replica "a" is slow, so the hedge to "b" answers.
 */
public final class CoreAsyncExample {
    private CoreAsyncExample() {}

    /**
     * The executor as a service would configure it: hedge after the p95 of recent per-replica
     * latency, at most 5% extra attempts. Needs a few calls of history before the first hedge.
     *
     * @return a production-style executor
     */
    public static HedgedExecutor adaptive() {
        return HedgedExecutor.of(
                "users",
                HedgeConfig.builder()
                        .maxExtraLoad(0.05) // delay = p95 of recent latency, budget = 5% extra attempts
                        .idempotentByDefault(true) // reads may run twice
                        .build());
    }

    /**
     * A fixed 20 ms delay and no budget, so that a single call shows a hedge.
     *
     * @return an executor that hedges any call slower than 20 ms
     */
    public static HedgedExecutor fixedDelay() {
        return HedgedExecutor.of(
                "users-demo",
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                        .budget(HedgeBudget.unlimited())
                        .idempotentByDefault(true)
                        .build());
    }

    /**
     * @param executor the executor
     * @param replicas the replicas
     * @param key what to read
     * @return the first successful answer
     */
    public static CompletableFuture<String> read(HedgedExecutor executor, Replicas replicas, String key) {
        return executor.executeAsync(ctx -> {
            String replica = replicas.pickExcluding(ctx.triedTargets()); // one not tried by this call
            ctx.reportTarget(replica); // latency is tracked per replica
            return replicas.getAsync(replica, key); // a losing attempt's future is cancelled
        });
    }

    /**
     * Prints which replica answered.
     *
     * @param args unused
     * @throws Exception if the read fails
     */
    public static void main(String[] args) throws Exception {
        Map<String, Duration> delays = new LinkedHashMap<>();
        delays.put("a", Duration.ofMillis(500)); // the slow one, tried first
        delays.put("b", Duration.ofMillis(5));
        try (Replicas replicas = new Replicas(delays)) {
            HedgedExecutor executor = fixedDelay();
            System.out.println("answer: " + read(executor, replicas, "user-42").get());
            System.out.println("stats: " + executor.stats());
        }
    }
}

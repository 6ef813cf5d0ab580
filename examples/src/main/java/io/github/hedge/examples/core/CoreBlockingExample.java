package io.github.hedge.examples.core;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * hedge-core with blocking code: {@code execute} runs each attempt on its own thread (a virtual
 * thread on JDK 21+), returns the first success and interrupts the losers. Idempotence is declared
 * per call; a call declared non-idempotent runs exactly once.
 */
public final class CoreBlockingExample {
    private CoreBlockingExample() {}

    /**
     * @param executor the executor
     * @param replicas the replicas, tried in turn
     * @param key what to read
     * @return the first successful answer
     * @throws Exception the failure of the last attempt, when none succeeded
     */
    public static String read(HedgedExecutor executor, Replicas replicas, String key) throws Exception {
        AtomicInteger attempt = new AtomicInteger();
        return executor.execute(CallOptions.idempotent(), () -> {
            // blocking code does not see the attempt context: pick by attempt order
            String replica = replicas.names()
                    .get(attempt.getAndIncrement() % replicas.names().size());
            return replicas.get(replica, key);
        });
    }

    /**
     * @param executor the executor
     * @param replicas the replicas
     * @param key what to write
     * @return the answer of the only attempt
     * @throws Exception the attempt's failure
     */
    public static String write(HedgedExecutor executor, Replicas replicas, String key) throws Exception {
        return executor.execute(
                CallOptions.nonIdempotent(), () -> replicas.get(replicas.names().get(0), key));
    }

    /**
     * Prints the answer of a hedged read and of a write that is never hedged.
     *
     * @param args unused
     * @throws Exception if a call fails
     */
    public static void main(String[] args) throws Exception {
        Map<String, Duration> delays = new LinkedHashMap<>();
        delays.put("a", Duration.ofMillis(500));
        delays.put("b", Duration.ofMillis(5));
        try (Replicas replicas = new Replicas(delays)) {
            HedgedExecutor executor = HedgedExecutor.of(
                    "blocking-demo",
                    HedgeConfig.builder()
                            .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                            .budget(HedgeBudget.unlimited())
                            .build());
            System.out.println("read: " + read(executor, replicas, "user-42"));
            System.out.println("write: " + write(executor, replicas, "user-42"));
            System.out.println("calls per replica: " + replicas.calls());
        }
    }
}

package io.github.hedge.examples.resilience4j;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.examples.core.Replicas;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class Resilience4jExampleTest {
    private static Replicas replicas() {
        Map<String, Duration> delays = new LinkedHashMap<>();
        delays.put("a", Duration.ofMillis(2));
        delays.put("b", Duration.ofMillis(2));
        return new Replicas(delays);
    }

    private static HedgedExecutor executor() {
        return HedgedExecutor.of(
                "r4j-test",
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofSeconds(10)))
                        .budget(HedgeBudget.unlimited())
                        .maxAttempts(2)
                        .idempotentByDefault(true)
                        .build());
    }

    @Test
    void should_open_the_failing_replicas_breaker_and_send_later_calls_to_the_healthy_one_when_a_replica_fails()
            throws Exception {
        try (Replicas replicas = replicas();
                Resilience4jExample example = new Resilience4jExample(replicas, executor())) {
            replicas.failing("a", true);
            for (int i = 0; i < 4; i++) {
                // a's failure starts the next attempt at once, on b
                assertThat(example.read("k" + i).toCompletableFuture().get(30, TimeUnit.SECONDS))
                        .isEqualTo("b:k" + i);
            }
            assertThat(example.breaker("a").getState()).isEqualTo(CircuitBreaker.State.OPEN);
            int callsToA = replicas.calls().get("a");
            for (int i = 0; i < 4; i++) {
                assertThat(example.read("x" + i).toCompletableFuture().get(30, TimeUnit.SECONDS))
                        .startsWith("b:");
            }
            assertThat(replicas.calls().get("a")).isEqualTo(callsToA);
            assertThat(example.retry().getMetrics().getNumberOfSuccessfulCallsWithRetryAttempt())
                    .isZero();
        }
    }

    @Test
    void should_retry_the_whole_hedged_call_when_every_replica_failed() throws Exception {
        try (Replicas replicas = replicas();
                Resilience4jExample example = new Resilience4jExample(replicas, executor())) {
            replicas.failing("a", true);
            replicas.failing("b", true);
            // both replicas recover once the first hedged call has failed, while Retry waits before the
            // next (healing on Retry's own event, not after a sleep: a late timer cannot reorder them)
            example.retry().getEventPublisher().onRetry(event -> {
                replicas.failing("a", false);
                replicas.failing("b", false);
            });
            var answer = example.read("k").toCompletableFuture();
            assertThat(answer.get(30, TimeUnit.SECONDS)).endsWith(":k");
            assertThat(example.retry().getMetrics().getNumberOfSuccessfulCallsWithRetryAttempt())
                    .isEqualTo(1);
        }
    }
}

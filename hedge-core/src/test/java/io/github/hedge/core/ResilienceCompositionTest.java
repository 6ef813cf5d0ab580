package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A hedge composes with resilience4j: the breaker and the retry see one hedged call as one call. */
class ResilienceCompositionTest {

    @Test
    void should_open_circuit_breaker_around_hedged_call_when_every_attempt_fails() {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = HedgedExecutor.of(
                "cb",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .budget(HedgeBudget.unlimited())
                        .delay(DelayPolicy.fixed(Duration.ofMillis(5)))
                        .build());
        CircuitBreaker cb = CircuitBreaker.of(
                "backend",
                CircuitBreakerConfig.custom()
                        .slidingWindowSize(4)
                        .minimumNumberOfCalls(4)
                        .failureRateThreshold(50)
                        .build());
        AtomicInteger attempts = new AtomicInteger();
        for (int i = 0; i < 4; i++) {
            CompletionStage<String> s = cb.executeCompletionStage(() -> ex.executeAsync(ctx -> {
                attempts.incrementAndGet();
                return CompletableFuture.failedFuture(new IOException("down"));
            }));
            assertThat(s.toCompletableFuture()).isCompletedExceptionally();
        }
        // each hedged call ran two attempts but counted as one call for the breaker
        assertThat(attempts).hasValue(8);
        assertThat(cb.getMetrics().getNumberOfFailedCalls()).isEqualTo(4);
        assertThat(cb.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        CompletionStage<String> rejected =
                cb.executeCompletionStage(() -> ex.executeAsync(ctx -> CompletableFuture.completedFuture("x")));
        assertThat(rejected.toCompletableFuture())
                .failsWithin(Duration.ofSeconds(5))
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(CallNotPermittedException.class);
    }

    @Test
    void should_retry_whole_hedged_call_when_wrapped_in_retry() {
        HedgedExecutor ex = HedgedExecutor.of(
                "retry",
                HedgeConfig.builder()
                        .idempotentByDefault(true)
                        .budget(HedgeBudget.unlimited())
                        .delay(DelayPolicy.fixed(Duration.ofSeconds(5)))
                        .build());
        Retry retry = Retry.of(
                "backend",
                RetryConfig.custom()
                        .maxAttempts(3)
                        .waitDuration(Duration.ofMillis(1))
                        .build());
        ScheduledExecutorService retryScheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            AtomicInteger attempts = new AtomicInteger();
            CompletionStage<String> s = retry.executeCompletionStage(
                    retryScheduler,
                    () -> ex.executeAsync(ctx -> attempts.incrementAndGet() < 5
                            ? CompletableFuture.failedFuture(new IOException("down"))
                            : CompletableFuture.completedFuture("ok")));
            // call 1: attempts 1+2 fail; call 2: attempts 3+4 fail; call 3: attempt 5 succeeds
            assertThat(s.toCompletableFuture())
                    .succeedsWithin(Duration.ofSeconds(30))
                    .isEqualTo("ok");
            assertThat(attempts).hasValue(5);
            assertThat(retry.getMetrics().getNumberOfSuccessfulCallsWithRetryAttempt())
                    .isEqualTo(1);
        } finally {
            retryScheduler.shutdownNow();
        }
    }
}

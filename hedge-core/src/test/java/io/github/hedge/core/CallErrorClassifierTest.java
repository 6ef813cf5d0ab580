package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** A call's own error classifier ({@link CallOptions.Builder#errorClassifier}), in virtual time. */
class CallErrorClassifierTest {
    private final VirtualTimeScheduler time = new VirtualTimeScheduler();

    private HedgedExecutor executor(ErrorClassifier executorClassifier) {
        return HedgedExecutor.of(
                "test",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .budget(HedgeBudget.unlimited())
                        .maxAttempts(3)
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .errorClassifier(executorClassifier)
                        .build());
    }

    @Test
    void should_end_the_call_at_once_when_the_call_classifier_says_fatal_and_the_executor_classifier_retryable() {
        HedgedExecutor ex = executor(ErrorClassifier.defaults());
        Probe probe = new Probe(time);
        CallOptions options = CallOptions.builder()
                .errorClassifier(ErrorClassifier.fatalOn(IllegalArgumentException.class))
                .build();

        CompletableFuture<String> call = ex.executeAsync(options, probe);
        probe.attempt(1).completeExceptionally(new IllegalArgumentException("bad request"));
        time.advance(Duration.ofMillis(100));

        assertThat(call).isCompletedExceptionally(); // never blocks, even when broken
        assertThatThrownBy(call::get).hasCauseInstanceOf(IllegalArgumentException.class);
        assertThat(probe.attempts()).isEqualTo(1);
    }

    @Test
    void should_retry_when_the_call_classifier_says_retryable_and_the_executor_classifier_fatal() {
        HedgedExecutor ex = executor(ErrorClassifier.fatalOn(IllegalArgumentException.class));
        Probe probe = new Probe(time);
        CallOptions options = CallOptions.builder()
                .errorClassifier(ErrorClassifier.defaults())
                .build();

        CompletableFuture<String> call = ex.executeAsync(options, probe);
        probe.attempt(1).completeExceptionally(new IllegalArgumentException("this replica only"));

        assertThat(probe.attempts()).isEqualTo(2); // the retry started at once, before any delay
        probe.attempt(2).complete("ok");
        assertThat(call).isCompletedWithValue("ok");
    }

    @Test
    void should_use_the_executor_classifier_when_the_call_gives_none() {
        HedgedExecutor ex = executor(ErrorClassifier.fatalOn(IllegalArgumentException.class));
        Probe probe = new Probe(time);

        CompletableFuture<String> call = ex.executeAsync(CallOptions.idempotent(), probe);
        probe.attempt(1).completeExceptionally(new IllegalArgumentException("bad request"));
        time.advance(Duration.ofMillis(100));

        assertThat(call).isCompletedExceptionally(); // never blocks, even when broken
        assertThatThrownBy(call::get).hasCauseInstanceOf(IllegalArgumentException.class);
        assertThat(probe.attempts()).isEqualTo(1);
        assertThat(CallOptions.idempotent().errorClassifier()).isNull();
    }
}

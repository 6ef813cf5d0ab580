package io.github.hedge.examples.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.HedgedExecutor;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CoreExamplesTest {
    private static Replicas slowThenFast() {
        Map<String, Duration> delays = new LinkedHashMap<>();
        delays.put("a", Duration.ofSeconds(20)); // far beyond any delay a loaded machine adds
        delays.put("b", Duration.ofMillis(5));
        return new Replicas(delays);
    }

    @Test
    void should_answer_from_the_hedge_and_cancel_the_slow_primary_when_the_first_replica_is_slow() throws Exception {
        try (Replicas replicas = slowThenFast()) {
            HedgedExecutor executor = CoreAsyncExample.fixedDelay();
            assertThat(CoreAsyncExample.read(executor, replicas, "user-42").get(30, TimeUnit.SECONDS))
                    .isEqualTo("b:user-42");
            assertThat(replicas.calls()).containsEntry("a", 1).containsEntry("b", 1);
            assertThat(executor.stats().hedgesWon()).isEqualTo(1);
            // the loser's future was cancelled, so its pending answer was dropped
            assertThat(replicas.cancelled()).containsEntry("a", 1);
        }
    }

    @Test
    void should_not_hedge_the_first_calls_when_there_is_no_latency_history_yet() throws Exception {
        Map<String, Duration> delays = new LinkedHashMap<>();
        delays.put("a", Duration.ofMillis(300)); // slow, and tried first by every call
        delays.put("b", Duration.ofMillis(1));
        try (Replicas replicas = new Replicas(delays)) {
            HedgedExecutor executor = CoreAsyncExample.adaptive();
            // the budget's cold-start tokens would allow these hedges: only the missing history stops them
            assertThat(executor.budget().snapshot().remaining()).isGreaterThanOrEqualTo(3);
            for (int i = 0; i < 3; i++) {
                CompletableFuture<String> call = CoreAsyncExample.read(executor, replicas, "k");
                assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo("a:k");
            }
            assertThat(replicas.calls()).containsEntry("a", 3).containsEntry("b", 0);
            assertThat(executor.stats().hedgesSent()).isZero();
        }
    }

    @Test
    void should_return_the_hedge_answer_and_interrupt_the_loser_when_blocking() throws Exception {
        try (Replicas replicas = slowThenFast()) {
            HedgedExecutor executor = CoreAsyncExample.fixedDelay();
            assertThat(CoreBlockingExample.read(executor, replicas, "user-42")).isEqualTo("b:user-42");
            assertThat(executor.stats().hedgesSent()).isEqualTo(1);
            // the losing attempt's thread is interrupted; give it a moment to notice
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(10))
                    .untilAsserted(() -> assertThat(replicas.cancelled()).containsEntry("a", 1));
        }
    }

    @Test
    void should_run_a_non_idempotent_call_exactly_once_when_it_is_slow() throws Exception {
        Map<String, Duration> delays = new LinkedHashMap<>();
        delays.put("a", Duration.ofMillis(300)); // well past the 20 ms hedge delay
        delays.put("b", Duration.ofMillis(5));
        try (Replicas replicas = new Replicas(delays)) {
            HedgedExecutor executor = CoreAsyncExample.fixedDelay();
            assertThat(CoreBlockingExample.write(executor, replicas, "k")).isEqualTo("a:k");
            assertThat(replicas.calls()).containsEntry("a", 1).containsEntry("b", 0);
            assertThat(executor.stats().hedgesSent()).isZero();
        }
    }

    @Test
    void should_print_the_hedges_answer_when_the_mains_run_as_programs() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            CoreAsyncExample.main(new String[0]);
            CoreBlockingExample.main(new String[0]);
        } finally {
            System.setOut(original);
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(printed)
                .contains("answer: b:user-42") // the async read: answered by the hedge to b
                .contains("hedgesSent=1, hedgesWon=1")
                .contains("read: b:user-42") // the blocking read, hedged too
                .contains("write: a:user-42") // the write is not idempotent: a alone, though slow
                .contains("calls per replica: {a=2, b=1}");
    }
}

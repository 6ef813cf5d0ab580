package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The budget as the executor spends it, in virtual time: every call is slow enough to want a
 * hedge, and the hedges sent stay at the budget's percent at 1, 10 and 1000 calls per second.
 */
class BudgetThroughExecutorTest {
    private static final long MS = 1_000_000L;

    @ParameterizedTest(name = "{0} calls/s for {1} s")
    @CsvSource({"1, 3600", "10, 600", "1000, 120"})
    void should_hold_the_percent_when_every_call_wants_a_hedge(int callsPerSecond, int seconds) {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = HedgedExecutor.of(
                "budget",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        // a window that holds at least 1 / ratio primaries even at 1 call/s
                        .budget(HedgeBudget.builder()
                                .ratio(0.05)
                                .window(Duration.ofSeconds(60))
                                .ticker(time)
                                .build())
                        .build());
        long interval = 1_000 * MS / callsPerSecond;
        int calls = callsPerSecond * seconds;
        for (int i = 0; i < calls; i++) {
            ex.executeAsync(ctx -> {
                CompletableFuture<String> f = new CompletableFuture<>();
                // the primary answers after 20 ms, a hedge after 1 ms: every call wants its hedge
                var t = time.schedule(() -> f.complete("ok"), (ctx.isHedge() ? 1 : 20) * MS);
                ctx.onCancel(t::cancel);
                return f;
            });
            time.advanceNanos(interval);
        }
        time.runUntilIdle();
        HedgeStats stats = ex.stats();
        double extraLoad = (double) stats.hedgesSent() / stats.calls();
        assertThat(extraLoad).isLessThanOrEqualTo(0.05);
        assertThat(extraLoad).isGreaterThan(0.045); // and the budget is actually spent
        assertThat(stats.budgetDenied()).isEqualTo(stats.calls() - stats.hedgesSent());
        assertThat(stats.inFlightCalls()).isZero();
        assertThat(time.pendingTasks()).isZero();
    }
}

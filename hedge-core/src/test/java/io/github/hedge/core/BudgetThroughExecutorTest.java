package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The budget as the executor spends it, in virtual time: every call is slow enough to want a
 * hedge, and the hedges sent stay at the budget's percent at 1 call per minute and at 1, 10 and
 * 1000 calls per second, with the default window and no floor.
 */
class BudgetThroughExecutorTest {
    private static final long MS = 1_000_000L;

    @ParameterizedTest(name = "one call every {0} ms, {1} calls")
    @CsvSource({"60000, 2000", "1000, 3600", "100, 6000", "1, 120000"})
    void should_hold_the_percent_when_every_call_wants_a_hedge(long intervalMillis, int calls) {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = HedgedExecutor.of(
                "budget",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        // the default window (30 s), at 1 call/min as at 1,000 calls/s (issue 6 item 9)
                        .budget(HedgeBudget.builder().ratio(0.05).ticker(time).build())
                        .build());
        long interval = intervalMillis * MS;
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
        assertThat(extraLoad).isGreaterThanOrEqualTo(0.0495); // and the budget is actually spent
        assertThat(stats.budgetDenied()).isEqualTo(stats.calls() - stats.hedgesSent());
        assertThat(stats.inFlightCalls()).isZero();
        assertThat(time.pendingTasks()).isZero();
    }
}

package io.github.hedge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.HedgeSavings;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link Savings}: one recording per call that its primary won, feeding both distributions. */
class SavingsWindowsTest {
    private static final long MS = 1_000_000L;

    private final AtomicLong now = new AtomicLong();
    private final Ticker ticker = now::get;
    private final Savings savings = new Savings(ticker, Duration.ofSeconds(30));

    @Test
    void should_count_a_won_primary_in_both_distributions_when_recorded_once() {
        for (int i = 0; i < 900; i++) {
            savings.primaryWon(10 * MS);
        }
        for (int i = 0; i < 100; i++) {
            savings.hedgeWon(20 * MS); // the call's latency
            savings.primaryCancelled(20 * MS); // its primary, still running when the hedge won
        }
        now.addAndGet(Duration.ofSeconds(1).toNanos());

        HedgeSavings s = savings.snapshot(stats(1000, 100));

        assertThat(s.hedged().count()).isEqualTo(1000);
        assertThat(s.unhedgedEstimate().count()).isEqualTo(1000);
        assertThat(s.censoredPrimaries()).isEqualTo(100);
        assertThat(s.hedged().p50Nanos()).isBetween(10 * MS, (long) (10.2 * MS));
        assertThat(s.hedged().p99Nanos()).isBetween(20 * MS, (long) (20.4 * MS));
        assertThat(s.extraLoad()).isEqualTo(0.1);
    }

    @Test
    void should_count_a_late_primary_in_the_unhedged_estimate_only_when_it_answered_after_its_call() {
        for (int i = 0; i < 10; i++) {
            savings.hedgeWon(5 * MS);
            savings.primaryAnswered(50 * MS);
        }
        now.addAndGet(Duration.ofSeconds(1).toNanos());

        HedgeSavings s = savings.snapshot(stats(10, 10));

        assertThat(s.hedged().maxNanos()).isLessThan(6 * MS);
        assertThat(s.unhedgedEstimate().p50Nanos()).isGreaterThanOrEqualTo(50 * MS);
        assertThat(s.censoredPrimaries()).isZero();
    }

    @Test
    void should_show_nothing_new_when_the_refresh_interval_has_not_passed() {
        savings.primaryWon(10 * MS);

        assertThat(savings.snapshot(stats(1, 0)).hedged().count()).isZero();

        now.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(savings.snapshot(stats(1, 0)).hedged().count()).isEqualTo(1);
    }

    private static HedgeStats stats(long calls, long hedges) {
        return new HedgeStats(calls, calls, 0, 0, 0, calls + hedges, hedges, 0, 0, 0, 0, 0, 0);
    }
}

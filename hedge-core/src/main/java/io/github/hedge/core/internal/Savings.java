package io.github.hedge.core.internal;

import io.github.hedge.core.HedgeSavings;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;

/**
 * The data behind {@link HedgeSavings}: primaries' latency (answered, or censored when cancelled)
 * and successful calls' end-to-end latency, each in a {@link LatencyTracker} of its own (no
 * targets). Recording is lock-free and O(1): one striped increment. Internal; thread-safe.
 */
public final class Savings {
    private static final long MIN_SAMPLES = 10_000;

    private final LatencyTracker primaries;
    private final LatencyTracker calls;

    /**
     * @param ticker the executor's time source
     * @param window how long a sample counts (at least; low rates keep up to 10,000 samples for up
     *     to an hour, or the window if longer)
     */
    public Savings(Ticker ticker, Duration window) {
        Duration refresh = Duration.ofSeconds(1);
        if (window.compareTo(Duration.ofSeconds(600)) > 0) {
            refresh = window.dividedBy(600).plusNanos(1);
        }
        if (refresh.compareTo(window) > 0) {
            refresh = window;
        }
        Duration maxAge = window.compareTo(Duration.ofHours(1)) > 0 ? window : Duration.ofHours(1);
        if (maxAge.toNanos() / refresh.toNanos() > 100_000) {
            maxAge = refresh.multipliedBy(100_000);
        }
        this.primaries = tracker(ticker, window, refresh, maxAge);
        this.calls = tracker(ticker, window, refresh, maxAge);
    }

    private static LatencyTracker tracker(Ticker ticker, Duration window, Duration refresh, Duration maxAge) {
        return LatencyTracker.builder()
                .ticker(ticker)
                .window(window)
                .refreshInterval(refresh)
                .minWindowSamples(MIN_SAMPLES)
                .maxWindowAge(maxAge)
                .maxTargets(1)
                .build();
    }

    /** A primary answered (successfully) after {@code nanos}. */
    public void primaryAnswered(long nanos) {
        primaries.record(nanos);
    }

    /** A primary was cancelled after running {@code nanos}. */
    public void primaryCancelled(long nanos) {
        primaries.recordCensored(nanos);
    }

    /** A call succeeded {@code nanos} after it started. */
    public void callSucceeded(long nanos) {
        calls.record(nanos);
    }

    /**
     * @param stats the executor's counters, for the extra load
     * @return the savings over the current window
     */
    public HedgeSavings snapshot(HedgeStats stats) {
        double extra = stats.calls() == 0 ? 0 : (double) stats.hedgesSent() / stats.calls();
        return new HedgeSavings(calls.summary(), primaries.summary(), primaries.censoredCount(), extra);
    }
}

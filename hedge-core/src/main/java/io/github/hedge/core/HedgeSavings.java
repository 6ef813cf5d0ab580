package io.github.hedge.core;

import java.util.List;
import java.util.Locale;

/**
 * What hedging saved, measured on an executor's own traffic: the latency its calls had (hedged)
 * beside an estimate of the latency they would have had without hedging, over the same recent
 * window. Read with {@link HedgedExecutor#savings()}. Immutable.
 *
 * <p><b>The estimate.</b> Without hedging, a call would have taken its primary attempt's latency.
 * A primary that answered shows it; a primary cancelled because a hedge won (or because the call
 * ended otherwise) only shows that its latency exceeds the time it had run: a censored sample. The
 * unhedged percentiles are the Kaplan–Meier (product-limit) estimate over both, so cancelled
 * primaries count as the lower bounds they are, neither dropped (which would flatter hedging) nor
 * taken at their elapsed time (which would hide the tail that hedging cut). The estimate is
 * consistent as long as the time a primary is cancelled at does not depend on its own latency
 * (true for a hedge that wins: the cancellation time is the delay plus the hedge's latency). Where
 * the censored data cannot reach a percentile (every primary slower than some point was
 * cancelled), the percentile is not supported (below) and not reported.
 *
 * <p><b>Accuracy in the deep tail.</b> What places a percentile is the primaries that answered
 * beyond it, and a primary that slow answers only if its hedge was slower still: at a p95 delay on
 * a heavy tail (pareto, alpha 1.5), of the 500 primaries slower than p99.9 in 500,000 calls, fewer
 * than one is expected to answer. There the estimate rests on a handful of samples and can be off
 * by far more either way (the simulator's sweep over twenty seeds, default settings, budgets of
 * 5-10%: estimated p99.9 from 0.52x to 3.7x the true value, p99 from 0.91x to 1.17x); lower bounds
 * alone do not tell how far beyond them the tail goes. {@link HedgeConfig.Builder#loserSampling(double)}
 * lets a share of beaten primaries finish so the estimate sees their real latency (0.5: every p99
 * and p99.9 estimate of the sweep at budgets of 1% and more within ±10% on ten seeds, 8.5% at
 * worst);
 * hedge-cassandra's wrapped session does it for all of them by default, at no cost to the servers.
 * Where a percentile lies in a gap between two modes (a slow share close to the budget), a few per
 * cent of error in the estimated slow share moves it from one mode to the other: in one such
 * simulated mixture the default estimate of p99 was 1.9-2.5x the true value (within 8.4% with a
 * share of 0.5).
 *
 * <p><b>Which percentiles the data support.</b> {@link #supportedPercentiles()} lists the
 * summary's percentiles (0.5, 0.9, 0.95, 0.99, 0.999) whose estimate rests on enough data: the
 * Kaplan–Meier estimate reaches the percentile, and its approximate 95% confidence interval (the
 * values where the estimated survival is {@code (1 - p)(1 ± 2 r)}, r its relative standard error
 * by Greenwood's formula) lies within 10% of the estimate. A tail too thinly observed fails it (at
 * the default settings, p99.9 on most heavy tails), and so does a percentile in a gap between two
 * modes, where a small error in the estimated share of slow calls moves it far.
 *
 * <p><b>Contract: supported percentiles only.</b> An estimate the data do not support is never
 * guessed: {@link #unhedgedEstimate()} holds -1 at that percentile, the Micrometer gauge {@code
 * hedge.latency.unhedged.estimated} reads NaN, and {@link #toString()} says {@code unsupported}.
 * For the deep tail, let a share of beaten primaries finish ({@link
 * HedgeConfig.Builder#loserSampling(double)}) and keep the window long enough to hold thousands of
 * calls beyond the percentile. Measured by the
 * simulator's sweep ({@code docs/benchmarks.md#how-far-to-trust-savings-the-unhedged-estimate}, grid seeds 1-20, budgets of at
 * least 0.01): of 992 supported estimates one was off by more than 10% (10.7%) and three by more
 * than 8%; every other estimate off by more than 10% was outside the list. On seed 1 p99 was
 * supported in 37 of the 42 cells and p99.9 in 14 of them.
 *
 * <p>All latencies in nanoseconds; -1 where the window holds no sample.
 *
 * @param hedged the calls that succeeded, end to end (the latency callers saw)
 * @param unhedgedEstimate the estimated latency of the same calls without hedging (their
 *     primaries), with {@code count} the primaries in the window, answered or cancelled; -1 at
 *     each percentile not in {@code supportedPercentiles}; {@code maxNanos} is the longest time a
 *     primary was seen to run, answered or cancelled
 * @param censoredPrimaries primaries in the window that were cancelled before they answered
 * @param extraLoad extra attempts per call since the executor was created ({@link
 *     HedgeStats#hedgesSent()} / {@link HedgeStats#calls()}), 0 before the first call
 * @param supportedPercentiles the percentiles of {@code unhedgedEstimate} (among 0.5, 0.9, 0.95,
 *     0.99 and 0.999) whose estimate the data support, as above, ascending; unmodifiable
 */
public record HedgeSavings(
        LatencySummary hedged,
        LatencySummary unhedgedEstimate,
        long censoredPrimaries,
        double extraLoad,
        List<Double> supportedPercentiles) {

    /** Copies {@code supportedPercentiles} into an unmodifiable list. */
    public HedgeSavings {
        supportedPercentiles = List.copyOf(supportedPercentiles);
    }

    /**
     * @param percentile one of the summary's percentiles: 0.5, 0.9, 0.95, 0.99 or 0.999
     * @return whether the unhedged estimate at that percentile rests on enough data (it is in
     *     {@link #supportedPercentiles()})
     */
    public boolean isEstimateSupported(double percentile) {
        return supportedPercentiles.contains(percentile);
    }

    /**
     * @return a line such as {@code "p99 412.0 ms -> 38.0 ms, p99.9 unsupported -> 61.0 ms for 4.8%
     *     extra (...)"}: the unhedged estimate, then what callers saw
     */
    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "p99 %s -> %s, p99.9 %s -> %s for %.1f%% extra (%d calls, %d primaries, %d cancelled)",
                estimate(unhedgedEstimate.p99Nanos(), 0.99),
                ms(hedged.p99Nanos()),
                estimate(unhedgedEstimate.p999Nanos(), 0.999),
                ms(hedged.p999Nanos()),
                extraLoad * 100,
                hedged.count(),
                unhedgedEstimate.count(),
                censoredPrimaries);
    }

    private String estimate(long nanos, double percentile) {
        return unhedgedEstimate.count() > 0 && !isEstimateSupported(percentile) ? "unsupported" : ms(nanos);
    }

    private static String ms(long nanos) {
        return nanos < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }
}

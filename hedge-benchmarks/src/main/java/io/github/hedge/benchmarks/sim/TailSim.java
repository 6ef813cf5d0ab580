package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code tail} scenario: three identical replicas, latency drawn from one distribution, and on
 * the same draws four variants: {@code unhedged} (the primary's latency X1), {@code hedged} (the
 * real executor with {@code maxExtraLoad(b)}: adaptive (1-b) percentile delay with its warm-up,
 * and a budget of b), {@code fixed} (the real executor with the true (1-b) quantile as a fixed
 * delay and the same budget) and {@code oracle} ({@code min(X1, d* + X2)} with d* the exact (1-b)
 * quantile: the best any delay-based hedge with that budget can do).
 */
public final class TailSim {
    /** Settings of one run. */
    public static final class Config {
        final Distribution dist;
        final double budget;
        final int requests;
        final long seed;
        final double ratePerSecond;
        final double loserSampling;
        final PercentileDelay.Scope scope;

        /**
         * @param dist latency distribution
         * @param budget b, the extra-load budget
         * @param requests number of requests
         * @param seed the seed of every draw
         * @param ratePerSecond Poisson arrival rate in virtual time
         * @param loserSampling the hedged variant's {@code HedgeConfig.loserSampling}, in [0, 1]
         * @param scope the hedged variant's delay scope, or null for the library's default
         */
        public Config(
                Distribution dist,
                double budget,
                int requests,
                long seed,
                double ratePerSecond,
                double loserSampling,
                PercentileDelay.Scope scope) {
            this.dist = dist;
            this.budget = budget;
            this.requests = requests;
            this.seed = seed;
            this.ratePerSecond = ratePerSecond;
            this.loserSampling = loserSampling;
            this.scope = scope;
        }

        /**
         * The library's default delay scope.
         *
         * @param dist latency distribution
         * @param budget b, the extra-load budget
         * @param requests number of requests
         * @param seed the seed of every draw
         * @param ratePerSecond Poisson arrival rate in virtual time
         * @param loserSampling the hedged variant's {@code HedgeConfig.loserSampling}, in [0, 1]
         */
        public Config(
                Distribution dist, double budget, int requests, long seed, double ratePerSecond, double loserSampling) {
            this(dist, budget, requests, seed, ratePerSecond, loserSampling, null);
        }

        /**
         * The library's defaults for loser sampling (none).
         *
         * @param dist latency distribution
         * @param budget b, the extra-load budget
         * @param requests number of requests
         * @param seed the seed of every draw
         * @param ratePerSecond Poisson arrival rate in virtual time
         */
        public Config(Distribution dist, double budget, int requests, long seed, double ratePerSecond) {
            this(dist, budget, requests, seed, ratePerSecond, 0);
        }
    }

    /** The outcome of one run. */
    public static final class Result {
        /** percentiles per variant, in the order unhedged, hedged, fixed, oracle */
        public final Map<String, Percentiles> variants;
        /** extra attempts per primary call of the hedged variant */
        public final double hedgedExtraLoad;
        /** extra attempts per primary call of the fixed variant */
        public final double fixedExtraLoad;
        /** the exact (1-b) quantile, in ms */
        public final double dStarMs;
        /** the hedged executor's delay at the end of the run, in ms (-1: no hedge) */
        public final double hedgedFinalDelayMs;
        /** hedges denied by the budget (hedged, fixed) */
        public final long hedgedDenied;

        /** the share of requests whose primary outlasts d*: the oracle's extra load */
        public final double oracleExtraLoad;

        final long fixedDenied;
        final long hedgedWon;
        final long fixedWon;
        /**
         * the hedged executor's estimate of the unhedged p99 and p99.9 (ms), from its own censored
         * samples; null when it has none
         */
        public double[] estimatedUnhedged;

        /**
         * the hedged executor's delay sampled once per virtual second (from the first second it
         * hedges): the mean and the standard deviation of {@code ln(delay / d*)}; 0 when never
         * sampled
         */
        public double delayLogMean;

        /** see {@link #delayLogMean} */
        public double delayLogSd;

        /** primaries the estimate holds only as lower bounds (cancelled before they answered) */
        public long censoredPrimaries;

        /** {@code HedgeSavings.isEstimateSupported} at p99 and p99.9 */
        public boolean[] estimateSupported;

        /** hedges sent (hedged, fixed) */
        final long hedgedSent;

        /**
         * the replicas' busy time over every attempt (answered: its latency; cancelled: until it
         * was cancelled) divided by the unhedged variant's (the sum of the primaries' latencies),
         * for hedged, fixed and oracle: what the variant costs the servers when latency is
         * service time
         */
        public double hedgedAttemptTime;

        /** see {@link #hedgedAttemptTime} */
        public double fixedAttemptTime;

        /** see {@link #hedgedAttemptTime} */
        public double oracleAttemptTime;

        final long fixedSent;

        Result(
                Map<String, Percentiles> variants,
                ExecutorRun.Result hedged,
                ExecutorRun.Result fixed,
                double dStarMs,
                double hedgedFinalDelayMs,
                double oracleExtraLoad) {
            this.oracleExtraLoad = oracleExtraLoad;
            this.variants = variants;
            this.hedgedExtraLoad = hedged.extraLoad();
            this.fixedExtraLoad = fixed.extraLoad();
            this.dStarMs = dStarMs;
            this.hedgedFinalDelayMs = hedgedFinalDelayMs;
            this.hedgedDenied = hedged.stats.budgetDenied();
            this.fixedDenied = fixed.stats.budgetDenied();
            this.hedgedWon = hedged.stats.hedgesWon();
            this.fixedWon = fixed.stats.hedgesWon();
            this.hedgedSent = hedged.stats.hedgesSent();
            this.fixedSent = fixed.stats.hedgesSent();
        }
    }

    private TailSim() {}

    /**
     * @param c the settings
     * @return the result
     */
    public static Result run(Config c) {
        Workload w = new Workload(c.dist, c.requests, c.ratePerSecond, 2, c.seed);
        double dStar = c.dist.quantileMs(1 - c.budget);
        int n = w.requests();

        double[] unhedged = new double[n];
        for (int i = 0; i < n; i++) {
            unhedged[i] = w.latencyMs(1, i);
        }
        double[] oracle = oracle(w, dStar);
        long oracleHedges = 0;
        double unhedgedTime = 0;
        double oracleTime = 0;
        for (int i = 0; i < n; i++) {
            double x1 = unhedged[i];
            unhedgedTime += x1;
            if (x1 > dStar) {
                oracleHedges++;
                // the winner's latency, plus the hedge's time until it won or lost
                oracleTime += oracle[i] + Math.min(w.latencyMs(2, i), x1 - dStar);
            } else {
                oracleTime += x1;
            }
        }
        ExecutorRun.AttemptTime hedgedTime = new ExecutorRun.AttemptTime();
        ExecutorRun.AttemptTime fixedTime = new ExecutorRun.AttemptTime();

        VirtualTimeScheduler hedgedClock = new VirtualTimeScheduler();
        Duration savingsWindow = Duration.ofNanos(2 * w.spanNanos()).plusSeconds(60);
        io.github.hedge.core.HedgedExecutor[] holder = new io.github.hedge.core.HedgedExecutor[1];
        HedgeConfig.Builder hedgedBuilder = HedgeConfig.builder().maxExtraLoad(c.budget);
        if (c.scope != null) { // maxExtraLoad's delay in another scope
            hedgedBuilder.delay(DelayPolicy.percentile(1 - c.budget)
                    .scope(c.scope)
                    .budgetFeedback(true)
                    .build());
        }
        HedgeConfig hedgedConfig = hedgedBuilder
                .loserSampling(c.loserSampling)
                .ticker(hedgedClock)
                .scheduler(hedgedClock)
                .idempotentByDefault(true)
                // the estimate of the unhedged latency covers the whole run, like the true figures
                .savingsWindow(savingsWindow)
                .build();
        holder[0] = io.github.hedge.core.HedgedExecutor.of("sim-hedged", hedgedConfig);
        // the delay once per virtual second, read at a call's arrival, where the call reads it too
        double[] delayLog = new double[3]; // samples, sum, sum of squares of ln(delay / d*)
        long[] nextSample = {0};
        ExecutorRun.Result hedged = ExecutorRun.run(
                holder[0], w, ExecutorRun.delayed(w, ExecutorRun.Slowdown.NONE, hedgedTime), hedgedClock, t -> {
                    if (t >= nextSample[0]) {
                        nextSample[0] = t + 1_000_000_000L;
                        long d = holder[0].currentDelayNanos();
                        if (d > 0) {
                            double x = Math.log(d / 1e6 / dStar);
                            delayLog[0]++;
                            delayLog[1] += x;
                            delayLog[2] += x * x;
                        }
                    }
                });
        long finalDelay = holder[0].currentDelayNanos();
        hedgedClock.advance(savingsWindow.dividedBy(100)); // past a refresh: every sample visible
        io.github.hedge.core.HedgeSavings saved = holder[0].savings();

        ExecutorRun.Result fixed = ExecutorRun.run(
                "sim-fixed",
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofNanos(Workload.nanos(dStar))))
                        .budgetRatio(c.budget),
                w,
                ExecutorRun.delayed(w, ExecutorRun.Slowdown.NONE, fixedTime),
                new VirtualTimeScheduler(),
                null);

        Map<String, Percentiles> variants = new LinkedHashMap<>();
        variants.put("unhedged", new Percentiles(unhedged));
        variants.put("hedged", hedged.percentiles());
        variants.put("fixed", fixed.percentiles());
        variants.put("oracle", new Percentiles(oracle));
        Result r = new Result(
                variants, hedged, fixed, dStar, finalDelay < 0 ? -1 : finalDelay / 1e6, (double) oracleHedges / n);
        if (delayLog[0] > 0) {
            r.delayLogMean = delayLog[1] / delayLog[0];
            r.delayLogSd = Math.sqrt(Math.max(0, delayLog[2] / delayLog[0] - r.delayLogMean * r.delayLogMean));
        }
        r.hedgedAttemptTime = hedgedTime.ms() / unhedgedTime;
        r.fixedAttemptTime = fixedTime.ms() / unhedgedTime;
        r.oracleAttemptTime = oracleTime / unhedgedTime;
        if (saved.unhedgedEstimate().count() > 0) {
            // an unsupported percentile is not reported (-1): NaN here, null in the JSON
            long p99 = saved.unhedgedEstimate().p99Nanos();
            long p999 = saved.unhedgedEstimate().p999Nanos();
            r.estimatedUnhedged = new double[] {p99 < 0 ? Double.NaN : p99 / 1e6, p999 < 0 ? Double.NaN : p999 / 1e6};
            r.censoredPrimaries = saved.censoredPrimaries();
            r.estimateSupported = new boolean[] {saved.isEstimateSupported(0.99), saved.isEstimateSupported(0.999)};
        }
        return r;
    }

    /**
     * The oracle: each request's latency if a hedge were sent exactly when the primary outlasts
     * {@code dStarMs}, to a replica answering after the request's second draw.
     *
     * @param w the draws
     * @param dStarMs the hedge delay d*, in ms
     * @return {@code min(X1, d* + X2)} per request, in ms
     */
    public static double[] oracle(Workload w, double dStarMs) {
        double[] out = new double[w.requests()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.min(w.latencyMs(1, i), dStarMs + w.latencyMs(2, i));
        }
        return out;
    }

    /**
     * Writes the result as the contract's JSON object: one member per variant.
     *
     * @param r the result
     * @param c the settings
     * @return one line of JSON
     */
    public static String json(Result r, Config c) {
        Json j = new Json().beginObject();
        for (Map.Entry<String, Percentiles> e : r.variants.entrySet()) {
            j.beginObject(e.getKey());
            e.getValue().writeTo(j);
            switch (e.getKey()) {
                case "hedged":
                    j.field("extra_load", Percentiles.round5(r.hedgedExtraLoad));
                    TailJson.hedgedDelay(j, r).field("hedges_won", r.hedgedWon).field("budget_denied", r.hedgedDenied);
                    TailJson.attemptTime(j, r.hedgedAttemptTime);
                    break;
                case "fixed":
                    j.field("extra_load", Percentiles.round5(r.fixedExtraLoad))
                            .field("delay_ms", Percentiles.round(r.dStarMs))
                            .field("hedges_won", r.fixedWon)
                            .field("budget_denied", r.fixedDenied);
                    TailJson.attemptTime(j, r.fixedAttemptTime);
                    break;
                case "oracle":
                    TailJson.oracle(j, r);
                    break;
                default:
                    break;
            }
            j.endObject();
        }
        TailJson.estimatedUnhedged(j, r, true);
        return j.endObject().toString();
    }

    /**
     * A human-readable table of the result.
     *
     * @param r the result
     * @param c the settings
     * @return the table
     */
    public static String table(Result r, Config c) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                "tail %s, budget %.3f, %d requests at %.0f/s, seed %d; d* = %.4f ms%n",
                c.dist.spec(), c.budget, c.requests, c.ratePerSecond, c.seed, r.dStarMs));
        sb.append(String.format(
                "%-9s %10s %10s %10s %10s %10s%n", "variant", "p50 ms", "p99 ms", "p999 ms", "p9999 ms", "extra"));
        for (Map.Entry<String, Percentiles> e : r.variants.entrySet()) {
            Percentiles p = e.getValue();
            String extra;
            switch (e.getKey()) {
                case "hedged":
                    extra = String.format("%.4f", r.hedgedExtraLoad);
                    break;
                case "fixed":
                    extra = String.format("%.4f", r.fixedExtraLoad);
                    break;
                case "oracle":
                    extra = String.format("%.4f", r.oracleExtraLoad);
                    break;
                default:
                    extra = "0";
            }
            sb.append(String.format(
                    "%-9s %10.4f %10.4f %10.4f %10.4f %10s%n",
                    e.getKey(), p.at(0.5), p.at(0.99), p.at(0.999), p.at(0.9999), extra));
        }
        sb.append(String.format(
                "denied: hedged %d of %d wanted, fixed %d of %d%n",
                r.hedgedDenied, r.hedgedDenied + r.hedgedSent, r.fixedDenied, r.fixedDenied + r.fixedSent));
        if (r.estimatedUnhedged != null) {
            Percentiles u = r.variants.get("unhedged");
            sb.append(String.format(
                    "estimated unhedged (from the hedged run's censored primaries): p99 %.4f ms (true %.4f),"
                            + " p999 %.4f ms (true %.4f)%n",
                    r.estimatedUnhedged[0], u.at(0.99), r.estimatedUnhedged[1], u.at(0.999)));
        }
        return sb.toString();
    }
}

package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code shift} scenario: three replicas, one of which ({@code replica-0}) becomes 10x slower
 * for 60 virtual seconds and then recovers. Reports the executor's delay over time (sampled with
 * {@code currentDelayNanos()}), {@code delay_max / healthy_p95} (no ratchet: target at most 1.2),
 * and the p999 of calls that start during the slowdown, hedged against unhedged on the same draws.
 * With two or three slow replicas ({@code --slow-replicas}) the delay should follow the shift
 * instead: {@code delay_within_10pct_of_shifted_after_s} says when it first came within 10% of the
 * shifted percentile (reported for every run; with one slow replica it stays -1). After the
 * slowdown, {@code extra_load_back_to_half_the_budget_after_recovery_s} says when hedging resumed,
 * and {@code after_recovery} gives the percentiles of the calls that start in its first 30 s, while
 * the latency window still holds the slow samples.
 */
public final class ShiftSim {
    /** The calls reported apart after the slowdown: those that start in its first 30 s. */
    private static final double AFTER_SECONDS = 30;

    /** Settings of one run. */
    public static final class Config {
        final Distribution dist;
        final double budget;
        final long seed;
        final double ratePerSecond;
        final double healthySeconds;
        final double slowSeconds;
        final double afterSeconds;
        final double factor;
        final double sampleSeconds;
        final int slowReplicas;
        final long windowSamples;

        /**
         * @param dist latency distribution of a healthy replica
         * @param budget b: the executor uses {@code maxExtraLoad(b)}
         * @param seed the seed
         * @param ratePerSecond arrival rate
         * @param healthySeconds virtual seconds before the slowdown
         * @param slowSeconds how long replica-0 is slow
         * @param afterSeconds virtual seconds after it recovers
         * @param factor how much slower it is
         * @param sampleSeconds how often the delay is sampled
         * @param slowReplicas how many replicas slow down (replica-0 first), 1 to 3
         * @param windowSamples 0 for the executor's own tracker; else a tracker that keeps this many
         *     samples (and up to an hour, as the executor's), to compare window sizes
         */
        public Config(
                Distribution dist,
                double budget,
                long seed,
                double ratePerSecond,
                double healthySeconds,
                double slowSeconds,
                double afterSeconds,
                double factor,
                double sampleSeconds,
                int slowReplicas,
                long windowSamples) {
            this.dist = dist;
            this.budget = budget;
            this.seed = seed;
            this.ratePerSecond = ratePerSecond;
            this.healthySeconds = healthySeconds;
            this.slowSeconds = slowSeconds;
            this.afterSeconds = afterSeconds;
            this.factor = factor;
            this.sampleSeconds = sampleSeconds;
            this.slowReplicas = slowReplicas;
            this.windowSamples = windowSamples;
        }
    }

    private ShiftSim() {}

    /**
     * @param c the settings
     * @return the result as one line of JSON
     */
    public static String run(Config c) {
        double total = c.healthySeconds + c.slowSeconds + c.afterSeconds;
        int n = (int) Math.round(total * c.ratePerSecond);
        Workload w = new Workload(c.dist, n, c.ratePerSecond, 2, c.seed);
        long slowFrom = (long) (c.healthySeconds * 1e9);
        long slowTo = (long) ((c.healthySeconds + c.slowSeconds) * 1e9);
        ExecutorRun.Slowdown slowdown =
                (replica, t) -> replica < c.slowReplicas && t >= slowFrom && t < slowTo ? c.factor : 1.0;

        VirtualTimeScheduler clock = new VirtualTimeScheduler();
        HedgeConfig.Builder config = HedgeConfig.builder()
                .maxExtraLoad(c.budget)
                .ticker(clock)
                .scheduler(clock)
                .idempotentByDefault(true);
        if (c.windowSamples > 0) {
            // the tracker the executor would build for its delay, with another sample count
            config.latencyTracker(LatencyTracker.builder()
                    .ticker(clock)
                    .sizedFor(config.build().delayPolicy())
                    .minWindowSamples(c.windowSamples)
                    .build());
        }
        HedgedExecutor executor = HedgedExecutor.of("sim-shift", config.build());
        long step = (long) (c.sampleSeconds * 1e9);
        List<double[]> samples = new ArrayList<>(); // {t seconds, delay ms}
        long[] nextSample = {step};
        // extra load per virtual second: hedges sent / calls started in that second
        List<double[]> perSecond = new ArrayList<>(); // {end of the second, extra load}
        long[] nextSecond = {1_000_000_000L};
        long[] last = {0, 0}; // calls, hedges at the previous second
        ExecutorRun.Result hedged = ExecutorRun.run(executor, w, ExecutorRun.delayed(w, slowdown), clock, now -> {
            while (now >= nextSample[0]) {
                long d = executor.currentDelayNanos();
                samples.add(new double[] {nextSample[0] / 1e9, d < 0 ? -1 : d / 1e6});
                nextSample[0] += step;
            }
            while (now >= nextSecond[0]) {
                var st = executor.stats();
                long calls = st.calls() - last[0];
                long hedges = st.hedgesSent() - last[1];
                perSecond.add(new double[] {nextSecond[0] / 1e9, calls == 0 ? 0 : (double) hedges / calls});
                last[0] = st.calls();
                last[1] = st.hedgesSent();
                nextSecond[0] += 1_000_000_000L;
            }
        });
        // how long after the shift the per-second extra load is back within b + 0.5 pp for the
        // rest of the slowdown
        double limit = c.budget + 0.005;
        double backWithin = -1;
        double maxPerSecond = 0;
        for (double[] ps : perSecond) {
            if (ps[0] * 1e9 > slowFrom && ps[0] * 1e9 <= slowTo) {
                maxPerSecond = Math.max(maxPerSecond, ps[1]);
            }
        }
        for (int i = perSecond.size() - 1; i >= 0; i--) {
            double[] ps = perSecond.get(i);
            if (ps[0] * 1e9 <= slowFrom || ps[0] * 1e9 > slowTo) {
                continue;
            }
            if (ps[1] > limit) {
                backWithin = ps[0] - c.healthySeconds;
                break;
            }
            backWithin = ps[0] - 1 - c.healthySeconds;
        }

        // when hedging resumes after the slowdown: the first second after it whose extra load is at
        // least half the budget
        double resumed = -1;
        for (double[] ps : perSecond) {
            if (ps[0] * 1e9 > slowTo && ps[1] >= c.budget / 2) {
                resumed = ps[0] - c.healthySeconds - c.slowSeconds;
                break;
            }
        }

        // unhedged on the same draws: the primary's latency on its replica at its start instant
        double[] unhedgedSlow = new double[n];
        double[] hedgedSlow = new double[n];
        double[] unhedgedAfter = new double[n];
        double[] hedgedAfter = new double[n];
        double[] unhedgedAll = new double[n];
        long afterTo = slowTo + (long) (AFTER_SECONDS * 1e9);
        int slowCount = 0;
        int afterCount = 0;
        for (int i = 0; i < n; i++) {
            long t = w.arrivalNanos(i);
            int replica = w.replicaFor(1, i, List.of());
            unhedgedAll[i] = w.latencyMs(1, i) * slowdown.factor(replica, t);
            if (t >= slowFrom && t < slowTo) {
                unhedgedSlow[slowCount] = unhedgedAll[i];
                hedgedSlow[slowCount] = hedged.latencyMs[i];
                slowCount++;
            } else if (t >= slowTo && t < afterTo) {
                unhedgedAfter[afterCount] = unhedgedAll[i];
                hedgedAfter[afterCount] = hedged.latencyMs[i];
                afterCount++;
            }
        }
        double healthyP95 = c.dist.quantileMs(1 - c.budget);
        double delayMax = 0;
        for (double[] s : samples) {
            delayMax = Math.max(delayMax, s[1]);
        }
        // with most replicas slow the delay should follow: the (1 - b) percentile times the factor
        double shifted = healthyP95 * c.factor;
        double followedAfter = -1;
        for (double[] s : samples) {
            if (s[0] * 1e9 > slowFrom && s[0] * 1e9 <= slowTo && s[1] >= 0.9 * shifted) {
                followedAfter = s[0] - c.healthySeconds;
                break;
            }
        }
        Percentiles uS = new Percentiles(unhedgedSlow, slowCount);
        Percentiles hS = new Percentiles(hedgedSlow, slowCount);

        Json j = new Json().beginObject();
        j.field("scenario", "shift")
                .field("dist", c.dist.spec())
                .field("budget", c.budget)
                .field("seed", c.seed)
                .field("rate_per_s", c.ratePerSecond)
                .field("requests", n)
                .field("slow_replica", Workload.NAMES[0])
                .field("slow_replicas", c.slowReplicas)
                .field("window_samples", c.windowSamples)
                .field("slow_factor", c.factor)
                .field("slow_from_s", c.healthySeconds)
                .field("slow_to_s", c.healthySeconds + c.slowSeconds)
                .field("healthy_p95_ms", Percentiles.round(healthyP95))
                .field("delay_max_ms", Percentiles.round(delayMax))
                .field("delay_max_over_healthy_p95", Percentiles.round(delayMax / healthyP95))
                .field("shifted_percentile_ms", Percentiles.round(shifted))
                .field("delay_within_10pct_of_shifted_after_s", followedAfter)
                .field("extra_load", Percentiles.round5(hedged.extraLoad()))
                .field("max_extra_load_per_second_during_slowdown", Percentiles.round5(maxPerSecond))
                .field("extra_load_within_b_plus_half_pp_after_s", backWithin)
                .field("extra_load_back_to_half_the_budget_after_recovery_s", resumed)
                .field("budget_denied", hedged.stats.budgetDenied())
                .field("hedges_sent", hedged.stats.hedgesSent());
        j.beginArray("extra_load_per_second");
        for (double[] ps : perSecond) {
            j.beginObject()
                    .field("t_s", ps[0])
                    .field("extra_load", Percentiles.round5(ps[1]))
                    .endObject();
        }
        j.endArray();
        j.beginArray("delay_over_time");
        for (double[] s : samples) {
            j.beginObject()
                    .field("t_s", s[0])
                    .field("delay_ms", Percentiles.round(s[1]))
                    .endObject();
        }
        j.endArray();
        j.beginObject("during_slowdown");
        j.field("requests", slowCount);
        j.beginObject("unhedged");
        uS.writeTo(j);
        j.endObject();
        j.beginObject("hedged");
        hS.writeTo(j);
        j.endObject();
        j.field("p999_hedged_over_unhedged", Percentiles.round(hS.at(0.999) / uS.at(0.999)));
        j.endObject();
        if (afterCount > 0) {
            Percentiles uA = new Percentiles(unhedgedAfter, afterCount);
            Percentiles hA = new Percentiles(hedgedAfter, afterCount);
            j.beginObject("after_recovery");
            j.field("seconds", Math.min(AFTER_SECONDS, c.afterSeconds));
            j.field("requests", afterCount);
            j.beginObject("unhedged");
            uA.writeTo(j);
            j.endObject();
            j.beginObject("hedged");
            hA.writeTo(j);
            j.endObject();
            j.field("p999_hedged_over_unhedged", Percentiles.round(hA.at(0.999) / uA.at(0.999)));
            j.endObject();
        }
        j.beginObject("whole_run");
        j.beginObject("unhedged");
        new Percentiles(unhedgedAll).writeTo(j);
        j.endObject();
        j.beginObject("hedged");
        hedged.percentiles().writeTo(j);
        j.endObject();
        j.endObject();
        return j.endObject().toString();
    }
}

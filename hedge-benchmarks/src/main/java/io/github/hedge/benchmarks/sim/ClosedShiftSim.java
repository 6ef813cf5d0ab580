package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * The {@code closed-shift} scenario: a closed loop of {@code lanes} clients (each sends its next
 * call when the previous one answered) against three replicas that all become {@code factor} times
 * slower at once, the virtual-time counterpart of hedge-benchmarks' Cassandra {@code SideBySide}
 * shift. Unlike {@code shift} (open loop, a fixed arrival rate), the call rate falls with the
 * latency, which is what a budget that saved tokens at the old rate must cope with.
 *
 * <p>Each attempt's latency is an independent draw from the distribution (capped at {@code capMs}
 * if positive) times the factor in force when the attempt starts; the primary goes to a random
 * replica and a hedge to another. Reports the extra load per virtual second (hedges sent / calls
 * started in that second) and the first second after the shift from which every 5 s average is
 * within {@code b + 0.5 pp} (as {@code SideBySide} and {@code GrpcHedgeBench} count it).
 */
public final class ClosedShiftSim {
    /** Settings of one run. */
    public static final class Config {
        final Distribution dist;
        final double capMs;
        final double budget;
        final double percentile;
        final long seed;
        final int lanes;
        final double healthySeconds;
        final double slowSeconds;
        final double factor;

        /**
         * @param dist latency distribution of every replica before the shift
         * @param capMs the largest draw in ms, 0 for none
         * @param budget b: the budget's ratio
         * @param percentile the delay's percentile without budget feedback, or 0 for {@code
         *     maxExtraLoad(b)} (the {@code 1 - b} percentile with feedback)
         * @param seed the seed
         * @param lanes concurrent closed-loop clients
         * @param healthySeconds virtual seconds before the shift
         * @param slowSeconds virtual seconds after it
         * @param factor how much slower every replica becomes
         */
        public Config(
                Distribution dist,
                double capMs,
                double budget,
                double percentile,
                long seed,
                int lanes,
                double healthySeconds,
                double slowSeconds,
                double factor) {
            this.dist = dist;
            this.capMs = capMs;
            this.budget = budget;
            this.percentile = percentile;
            this.seed = seed;
            this.lanes = lanes;
            this.healthySeconds = healthySeconds;
            this.slowSeconds = slowSeconds;
            this.factor = factor;
        }
    }

    private ClosedShiftSim() {}

    /**
     * @param c the settings
     * @return the result as one line of JSON
     */
    public static String run(Config c) {
        VirtualTimeScheduler clock = new VirtualTimeScheduler();
        HedgeConfig.Builder config =
                HedgeConfig.builder().ticker(clock).scheduler(clock).idempotentByDefault(true);
        if (c.percentile > 0) {
            config.delay(DelayPolicy.percentile(c.percentile).build())
                    .budget(HedgeBudget.builder().ratio(c.budget).ticker(clock).build());
        } else {
            config.maxExtraLoad(c.budget);
        }
        HedgedExecutor executor = HedgedExecutor.of("sim-closed-shift", config.build());
        long shiftAt = (long) (c.healthySeconds * 1e9);
        long end = shiftAt + (long) (c.slowSeconds * 1e9);
        SplittableRandom random = new SplittableRandom(c.seed);
        int[] replicas = new int[1];
        Runnable[] lane = new Runnable[1];
        lane[0] = () -> {
            if (clock.nanoTime() >= end) {
                return;
            }
            executor.executeAsync(CallOptions.idempotent(), ctx -> {
                        long now = clock.nanoTime();
                        int replica;
                        if (ctx.triedTargets().isEmpty()) {
                            replica = random.nextInt(Workload.REPLICAS);
                        } else {
                            do {
                                replica = random.nextInt(Workload.REPLICAS);
                            } while (ctx.triedTargets().contains(Workload.NAMES[replica]));
                        }
                        replicas[0]++;
                        ctx.reportTarget(Workload.NAMES[replica]);
                        double ms = c.dist.sampleMs(random);
                        if (c.capMs > 0) {
                            ms = Math.min(ms, c.capMs);
                        }
                        if (now >= shiftAt) {
                            ms *= c.factor;
                        }
                        CompletableFuture<Object> cf = new CompletableFuture<>();
                        var task = clock.schedule(() -> cf.complete(Boolean.TRUE), Workload.nanos(ms));
                        ctx.onCancel(task::cancel);
                        return cf;
                    })
                    .whenComplete((v, e) -> clock.schedule(lane[0], 0));
        };
        for (int l = 0; l < c.lanes; l++) {
            clock.schedule(lane[0], 0);
        }
        List<long[]> perSecond = new ArrayList<>(); // {calls, hedges} started in each second
        long[] last = {0, 0};
        for (long t = 1_000_000_000L; t <= end; t += 1_000_000_000L) {
            clock.advanceTo(t);
            HedgeStats st = executor.stats();
            perSecond.add(new long[] {st.calls() - last[0], st.hedgesSent() - last[1]});
            last[0] = st.calls();
            last[1] = st.hedgesSent();
        }
        clock.runUntilIdle();
        int shiftSecond = (int) Math.round(c.healthySeconds);
        double limit = c.budget + 0.005;
        int back = -1;
        for (int t = shiftSecond; t + 5 <= perSecond.size() && back < 0; t++) {
            boolean ok = true;
            for (int u = t; u + 5 <= perSecond.size(); u++) {
                long calls = 0;
                long hedges = 0;
                for (int v = u; v < u + 5; v++) {
                    calls += perSecond.get(v)[0];
                    hedges += perSecond.get(v)[1];
                }
                ok &= calls > 0 && (double) hedges / calls <= limit;
            }
            if (ok) {
                back = t - shiftSecond;
            }
        }
        HedgeStats st = executor.stats();
        Json j = new Json().beginObject();
        j.field("scenario", "closed-shift")
                .field("dist", c.dist.spec())
                .field("cap_ms", c.capMs)
                .field("budget", c.budget)
                .field("percentile", c.percentile)
                .field("seed", c.seed)
                .field("lanes", c.lanes)
                .field("factor", c.factor)
                .field("shift_at_s", c.healthySeconds)
                .field("calls", st.calls())
                .field("extra_load", Percentiles.round5(st.calls() == 0 ? 0 : (double) st.hedgesSent() / st.calls()))
                .field("budget_denied", st.budgetDenied())
                .field("hedges_sent", st.hedgesSent())
                .field("back_within_b_plus_half_pp_5s_average_from_s", back)
                .field("delay_end_ms", Percentiles.round(executor.currentDelayNanos() / 1e6));
        j.beginArray("per_second");
        for (int s = 0; s < perSecond.size(); s++) {
            long[] ps = perSecond.get(s);
            j.beginObject()
                    .field("t_s", s - shiftSecond)
                    .field("calls", ps[0])
                    .field("extra_load", Percentiles.round5(ps[0] == 0 ? 0 : (double) ps[1] / ps[0]))
                    .endObject();
        }
        j.endArray();
        return j.endObject().toString();
    }
}

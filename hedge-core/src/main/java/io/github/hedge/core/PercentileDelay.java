package io.github.hedge.core;

import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.internal.TrackerSnapshot;
import java.time.Duration;
import java.util.Objects;

/**
 * Adaptive delay: the {@code p}-th percentile of recent per-attempt latency from the context's
 * {@link LatencyTracker}, clamped to {@code [min, max]}. Built by {@link DelayPolicy#percentile}.
 *
 * <p><b>Warm-up.</b> Until the window holds {@code minSamples} samples, and at least {@code 5 / (1 -
 * q)} of them for the percentile {@code q} asked for (five expected above it: 100 for p95, 500 for
 * p99, 5,000 for p99.9; fewer barely tell it from the largest sample), the percentile is not trusted
 * and the {@code fallback} policy decides. Once trusted, and until the window holds about {@code 28
 * q / (1 - q)} samples (670 for a p96), the percentile read is a lower bound of {@code q}'s: {@code
 * q} lowered by one standard error of the share of samples above it, on a coarse grid (p95.24 or
 * p94.34 for a p96). Read from a few hundred samples, a percentile near the edge of a slow mode (3%
 * of calls twenty times slower, a p95) otherwise lies in that mode whenever a few more slow samples
 * than their share came in, and every slow call waits for it; with budget feedback, the floors keep
 * the hedges the lower level asks for within the budget. With a target-based scope, the percentile is trusted
 * once a target holds that many samples of its own; until then, a pooled percentile is not used
 * when the adapter reports targets, since one stalling target would lift it. The default fallback
 * is a warm-up bound built from the first samples, which hedges from the first sample on and
 * meets the percentile when it becomes trusted ({@code docs/core.md#cold-start} gives the rule and why);
 * {@link Builder#fallback(DelayPolicy) fallback(DelayPolicy.never())} hedges nothing before the
 * first estimate (as Finagle). At low rates the window's maximum age limits the
 * samples (the executor's own tracker keeps up to an hour: 3,600 samples at 1 call/s, enough for
 * p99 but not for p99.9; a tracker built with {@link LatencyTracker#builder()} keeps 10 minutes
 * unless given a longer {@link LatencyTracker.Builder#maxWindowAge} or sized with {@link
 * LatencyTracker.Builder#sizedFor}).
 *
 * <p><b>No ratchet.</b> The tracker must be fed each attempt's own latency (the executor does:
 * winners, late successes and the elapsed time of cancelled losers), never the hedged end-to-end
 * latency, or the percentile climbs until hedging stops (Scylla #3746). With the default
 * {@link Scope#TARGET_CONSENSUS} scope, one target among three more than 1.25 times slower than
 * the others does not lift the targets' percentile; with budget feedback, the delay still rises to
 * the pooled percentile the budget pays for when the slow target's calls ask for more hedges than
 * that and the budget's bucket is less than half full ({@link Builder#budgetFeedback(boolean)}).
 *
 * <p>Cassandra 4.0's {@code MIN(99p,50ms)} is {@code percentile(0.99).max(50ms)} and
 * {@code MAX(99p,50ms)} is {@code percentile(0.99).min(50ms)}; {@link DelayPolicy#min} and
 * {@link DelayPolicy#max} combine any two policies the same way.
 *
 * <p>Immutable and thread-safe; {@link #delayNanos} reads cached values only.
 */
public final class PercentileDelay implements DelayPolicy {
    /** Which samples the percentile is taken over. */
    public enum Scope {
        /** all samples of all targets pooled together */
        CLUSTER,
        /**
         * the lower median of the targets' own percentiles (targets with at least {@code minSamples}
         * samples), so a minority of slow targets cannot drag the delay up; pooled samples when no
         * target qualifies (the adapter reports no targets)
         */
        TARGET_MEDIAN,
        /**
         * the default: the targets' own percentiles (targets with at least {@code minSamples}
         * samples) averaged, weighted by samples, over those within a factor 1.25 of their lower
         * median ({@link LatencyTracker#consensusTargetPercentileNanos}); like {@link
         * #TARGET_MEDIAN}, a minority of slow targets cannot drag the delay up, but the delay rests on
         * the samples of every target that agrees, so it jitters less (on hedge-benchmarks' steepest
         * sweep cell, a 1% budget on {@code lognormal:0,2}, over 8 seeds the delay's standard
         * deviation fell from 3.7% to 3.3% on average, and the hedged p99.9 came closer to the
         * oracle's on 7 of them; raw output {@code
         * hedge-benchmarks/results/cell-lognormal2-b0.01-seeds1-8-2026-11-24.jsonl}); pooled samples when no target qualifies
         */
        TARGET_CONSENSUS,
        /** the percentile of the target the latest attempt ran on; pooled samples when unknown */
        PREVIOUS_TARGET
    }

    private final double percentile;
    private final Duration min;
    private final Duration max;
    private final long minNanos;
    private final long maxNanos;
    private final long minSamples;
    private final DelayPolicy fallback;
    private final Scope scope;
    private final boolean budgetFeedback;
    /** Whether {@link #fallback} is the built-in {@link WarmUpDelay}, clamped like the percentile. */
    private final boolean warmUp;
    /** The percentile aimed at for each feedback step: index 0 with plenty of tokens. */
    private final double[] aimed;
    /** Samples needed before {@link #aimed}[i] is trusted. */
    private final long[] needed;

    /** Shares of the budget's cap at or above which the feedback aims at {@link #AIM_FACTORS}[i]. */
    private static final double[] AIM_FILL = {0.125, 0.0625, 0.03125, 0};
    /**
     * The budget's fill below which the floors apply. They keep demand within what the budget
     * supplies; a bucket fuller than this can pay for more for a while, and a full one loses its
     * deposits, so the floors would only hold back hedges the budget pays for anyway.
     */
    private static final double FLOOR_FILL = 0.5;
    /** The share of {@code 1 - percentile} aimed at, per step. */
    private static final double[] AIM_FACTORS = {1.0, 0.8, 0.6, 0.4};
    /**
     * Samples expected above a percentile before it is trusted. With 1 (the largest of {@code 1 /
     * (1 - p)} samples), the first minutes of hedge-benchmarks' sweep at a 0.1% budget saw up to
     * 1.26% of hedges denied; with 5, at most 0.85% in all 108 cells (docs/benchmarks.md).
     */
    private static final double ABOVE = 5;
    /**
     * The share of the budget's ratio that the pooled percentile asks for while the budget runs low:
     * demand a little under supply, so the bucket refills.
     */
    private static final double POOLED_SHARE = 0.8;
    /**
     * The most that refilling ({@link #POOLED_SHARE}) may lift the pooled percentile, as a multiple
     * of the pooled percentile at the ratio; beyond it the step is not taken. The step saves the
     * hedges of the calls between the two levels and delays those of every call above both. On the
     * heaviest smooth tails of hedge-benchmarks' grid it lifts the delay by a quarter at most (p95
     * to p96: lognormal σ = 2, 1.24x; Weibull shape 0.4, 1.20x; Pareto α = 1.5, 1.16x). A larger
     * gap means a slow mode lies between the levels, such as a target that stalls a share of all
     * calls between 0.8 and 1 times the ratio: the step would move every stalled call's hedge into
     * the stall and still send it. So the delay stays at the ratio's percentile. Why 2: at 1.5,
     * noise in a few hundred samples of a heavy tail crossed the gap (hedge-benchmarks' transient
     * grid, lognormal σ = 2, first 1,000 calls: p99.9 about 2% higher); at 3, the stalling-replica
     * cells gained less.
     */
    private static final double REFILL_GAP = 2;
    /**
     * The shares of the budget's ratio a supply floor's level may aim at ({@link #supplyLevel}):
     * {@code 2^(j/4)}, j = -4..12, so the tracker caches a few percentiles, not one per token.
     */
    private static final double[] SUPPLY_GRID = supplyGrid();
    /** Standard errors by which a supply floor's level is lowered: a lower bound, not a guess. */
    private static final double Z = 1;

    private static double[] supplyGrid() {
        double[] g = new double[17];
        for (int j = 0; j < g.length; j++) {
            g[j] = Math.pow(2, (j - 4) / 4.0);
        }
        return g;
    }

    private PercentileDelay(Builder b) {
        this.percentile = b.percentile;
        this.min = b.min;
        this.max = b.max;
        this.minNanos = b.min.toNanos();
        this.maxNanos = b.max.toNanos();
        this.minSamples = b.minSamples;
        this.fallback = b.fallback != null ? b.fallback : new WarmUpDelay(b.percentile);
        this.warmUp = b.fallback == null;
        this.scope = b.scope;
        this.budgetFeedback = b.budgetFeedback;
        this.aimed = new double[AIM_FACTORS.length];
        this.needed = new long[AIM_FACTORS.length];
        for (int i = 0; i < aimed.length; i++) {
            aimed[i] = 1 - (1 - percentile) * AIM_FACTORS[i];
            needed[i] = samplesFor(aimed[i], minSamples);
        }
    }

    /**
     * {@code max(minSamples, ceil(ABOVE / (1 - p)))}, the rounding error of {@code 1 - p} ignored.
     */
    static long samplesFor(double p, long minSamples) {
        return Math.max(minSamples, (long) Math.ceil(ABOVE / (1 - p) - 1e-6));
    }

    static Builder builder(double p) {
        return new Builder(p);
    }

    @Override
    public long delayNanos(DelayContext context) {
        Parts parts = parts(context);
        long v = parts.estimate;
        if (v < 0) {
            if (!warmUp) {
                return fallback.delayNanos(context);
            }
            if (parts.warmUp == NO_HEDGE) {
                return NO_HEDGE;
            }
            v = parts.warmUp;
        }
        if (budgetFeedback) {
            v = Math.max(v, parts.floor);
        }
        return clamp(v);
    }

    @Override
    public DelaySource source(DelayContext context) {
        Parts parts = parts(context);
        long v = parts.estimate;
        DelaySource source = DelaySource.ESTIMATE;
        if (v < 0) {
            if (!warmUp) {
                return DelaySource.FALLBACK;
            }
            v = parts.warmUp;
            if (v == NO_HEDGE) {
                return parts.starved ? DelaySource.BUDGET : DelaySource.WARM_UP;
            }
            source = DelaySource.WARM_UP;
        }
        return budgetFeedback && parts.floor > v ? DelaySource.BUDGET : source;
    }

    /**
     * What a decision reads from the tracker, for one feedback step and one supply floor level: the
     * trusted percentile, the built-in warm-up bound and the floor. These depend on the context only
     * through the tracker's snapshot, its first answers, the budget's ratio, the step and the level
     * (and, with {@link Scope#PREVIOUS_TARGET}, the previous target), so the tracker keeps the latest
     * ones and a call that finds them all the same reads them from there: one clock read and the
     * budget's fill and supply per call, instead of every reader's.
     */
    static final class Parts {
        final PercentileDelay owner;
        final TrackerSnapshot snapshot;
        final int firstAnswers;
        final int key;
        /** the budget's ratio read: the estimate's pooled level and the floor depend on it */
        final double ratio;
        /** the trusted percentile, ns; -1 while it is not trusted */
        final long estimate;
        /** the built-in warm-up bound, ns, when the estimate is not trusted; NO_HEDGE when none */
        final long warmUp;
        /** the supply floor, ns; -1 when none */
        final long floor;
        /** whether the warm-up sends no hedge because the budget supplies too few tokens */
        final boolean starved;

        Parts(
                PercentileDelay owner,
                TrackerSnapshot snapshot,
                int firstAnswers,
                int key,
                double ratio,
                long estimate,
                long warmUp,
                long floor,
                boolean starved) {
            this.owner = owner;
            this.snapshot = snapshot;
            this.firstAnswers = firstAnswers;
            this.key = key;
            this.ratio = ratio;
            this.estimate = estimate;
            this.warmUp = warmUp;
            this.floor = floor;
            this.starved = starved;
        }
    }

    private Parts parts(DelayContext context) {
        LatencyTracker tracker = context.latency();
        TrackerSnapshot snapshot = tracker.snapshot(); // the decision's one clock read
        int answers = tracker.firstAnswers();
        double ratio = context.budgetRatio();
        double fill = context.budgetFill();
        boolean floors = budgetFeedback && fill < FLOOR_FILL;
        int step = budgetFeedback ? step(fill) : 0;
        long n = snapshot.sampleCount();
        double supply = floors && n > 0 && ratio > 0 && ratio < 1 ? context.budgetSupply(n) : Double.NaN;
        int level = floors ? supplyLevel(supply, ratio, n) : -1;
        // the warm-up asks for hedges at a level its samples support, ABOVE of them above it at
        // least; a budget that pays for fewer than that over as many calls (a small ratio's few
        // cold-start tokens) would refuse them, so the warm-up sends none
        boolean starved = warmUp && !Double.isNaN(supply) && context.budgetHedgesOver(n) < ABOVE;
        int key = floors ? 2 * (step * (SUPPLY_GRID.length + 1) + level + 1) + (starved ? 1 : 0) : -1;
        boolean cached = scope != Scope.PREVIOUS_TARGET;
        if (cached) {
            Parts p = tracker.delayParts;
            if (p != null
                    && p.owner == this
                    && p.snapshot == snapshot
                    && p.firstAnswers == answers
                    && p.key == key
                    && Double.compare(p.ratio, ratio) == 0) {
                return p;
            }
        }
        long estimate = estimate(context, step, floors);
        long warm = estimate < 0 && warmUp && !starved ? fallback.delayNanos(context) : NO_HEDGE;
        long floor = level < 0 ? -1 : tracker.percentileNanos(1 - SUPPLY_GRID[level] * ratio);
        Parts p = new Parts(this, snapshot, answers, key, ratio, estimate, warm, floor, estimate < 0 && starved);
        if (cached) {
            tracker.delayParts = p;
        }
        return p;
    }

    /** @return the feedback step for the budget's fill: 0 with plenty of tokens */
    private static int step(double fill) {
        int step = 0;
        while (fill < AIM_FILL[step]) {
            step++;
        }
        return step;
    }

    /**
     * The level of the supply floor: the pooled percentile at which demand for hedges meets what the
     * budget supplies over as many calls as the window holds samples ({@link DelayContext#budgetSupply(long)}): a call slower
     * than it is one of the share {@code s} of calls the budget can pay for. The level is {@code 1 -
     * s} rounded up to the grid {@code 1 - ratio * 2^(j/4)}, at most the highest level the samples
     * support ({@code 1 - 5 / n}), and left out while {@code s} is above {@code 8 * ratio} (the
     * budget pays for the warm-up bound's demand). Pooled: demand is what all the traffic asks for.
     *
     * @param supply the budget's supply over {@code n} calls ({@link DelayContext#budgetSupply(long)}),
     *     NaN when unknown
     * @param ratio the budget's ratio ({@link DelayContext#budgetRatio()})
     * @param n the samples in the window
     * @return the floor's index in {@link #SUPPLY_GRID}, or -1 when there is none
     */
    private static int supplyLevel(double supply, double ratio, long n) {
        if (n <= 0 || !(ratio > 0 && ratio < 1)) {
            return -1;
        }
        if (!(supply < SUPPLY_GRID[SUPPLY_GRID.length - 1] * ratio)) {
            return -1; // unknown, unlimited, or plenty
        }
        // a lower bound of the (1 - supply) percentile that n samples support: the level lowered by
        // one standard error of the share of samples above it (a noisy level near a slow mode
        // would otherwise lift the delay into it), at most the level with ABOVE samples above it,
        // rounded down to the grid
        double share = Math.max(supply + Z * Math.sqrt(supply * (1 - supply) / n), ABOVE / n);
        int i = 0;
        while (i < SUPPLY_GRID.length && SUPPLY_GRID[i] * ratio < share) {
            i++;
        }
        return i == SUPPLY_GRID.length || SUPPLY_GRID[i] * ratio >= 1 ? -1 : i;
    }

    /**
     * @param step the feedback step ({@link #step}); 0 without budget feedback
     * @param floors whether the pooled floor applies: budget feedback, and a bucket that is not full
     * @return the trusted percentile for this context, unclamped, or -1 while it is not trusted.
     *     While the budget runs low, the step's percentile, or the highest of the lower steps' that
     *     the samples support: a step the samples cannot support yet must not hand the delay back
     *     to the warm-up bound, which asks for more hedges, not fewer
     */
    private long estimate(DelayContext context, int step, boolean floors) {
        LatencyTracker tracker = context.latency();
        long pooled = tracker.sampleCount();
        long v = -1;
        for (int s = step; s >= 0 && v < 0; s--) {
            v = ownEstimate(context, tracker, lowered(budgetFeedback ? aimed[s] : percentile, pooled), needed[s]);
        }
        boolean perTarget = v >= 0 && scope != Scope.CLUSTER;
        if (v < 0) {
            // targets reported but none trusted yet: their pooled samples would let a slow target
            // lift the delay (one stalling target of three puts a pooled p96 in its stalls)
            perTarget = scope != Scope.CLUSTER && tracker.medianTargetPercentileNanos(0.5, 1) >= 0;
            for (int s = step; s >= 0 && v < 0 && !perTarget; s--) {
                if (pooled >= needed[s]) {
                    v = tracker.percentileNanos(lowered(budgetFeedback ? aimed[s] : percentile, pooled));
                }
            }
        } else if (perTarget && floors) {
            // demand is what all the traffic asks for, slow targets included. A target that stalls
            // a share of its calls puts demand at the targets' own percentile above the budget (one
            // of three stalling 10%: 8% at a p95), and a budget asked for more than it supplies runs
            // dry in bursts, denying exactly the stalled calls. So the delay is at least the pooled
            // percentile that asks for what the budget supplies (a little less while it runs low,
            // so the bucket refills): the slowest calls, stalls first. Not the percentile asked
            // for, if higher: with stalls a little over its share of all calls (3.3% stalls and a
            // 1% heavy tail at a p96), it lies in the stalls, and they waited for it (WarmUpDelayTest
            // has such a case). The pooled estimate counts cancelled primaries as the lower bounds
            // they are, and leaves out stale targets' and those the traffic left (LatencyTracker):
            // a hanging target, or one placement keeps calls off, cannot lift it.
            double ratio = context.budgetRatio();
            if (ratio > 0 && ratio < 1) {
                double level = 1 - (step > 0 ? POOLED_SHARE : 1) * ratio;
                if (tracker.sampleCount() >= samplesFor(level, minSamples)) {
                    long floor = tracker.percentileNanos(level);
                    if (step > 0) {
                        // the step below the ratio refills the bucket, but not across a slow mode
                        long atRatio = tracker.percentileNanos(1 - ratio);
                        if (floor > REFILL_GAP * atRatio) {
                            floor = atRatio;
                        }
                    }
                    v = Math.max(v, floor);
                }
            }
        }
        return v;
    }

    /** Shares of {@code 1 - level} a lowered level may aim at: {@code 2^(j/4)}, j = 0..4. */
    private static final double[] LOWER_GRID = {1, Math.pow(2, 0.25), Math.sqrt(2), Math.pow(2, 0.75), 2};

    /**
     * A lower confidence bound of {@code level}'s percentile that {@code n} samples support: the
     * level lowered by {@link #Z} standard errors of the share of samples above it, rounded towards the
     * level on the grid {@code 1 - (1 - level) * 2^(j/4)}, j = 0..4. From a few hundred
     * samples, a percentile near the edge of a slow mode (3% of calls slow, a p95) lies in the slow
     * mode whenever a few more slow samples than their share came in, and the delay then waits for
     * the whole mode; its lower bound rarely does. Unchanged from about {@code 28 level / (1 -
     * level)} samples on (670 for a p96), so the steady state is not.
     *
     * @param level the percentile aimed at
     * @param n the samples in the window, pooled
     * @return the level to read
     */
    private static double lowered(double level, long n) {
        if (n <= 0) {
            return level;
        }
        double share = 1 - level;
        double factor = 1 + Z * Math.sqrt(level / (share * n));
        int j = 0;
        while (j + 1 < LOWER_GRID.length && LOWER_GRID[j + 1] <= factor) {
            j++;
        }
        return 1 - share * LOWER_GRID[j];
    }

    /** @return the targets' percentile the scope reads, or -1 when no target has {@code need} samples */
    private long ownEstimate(DelayContext context, LatencyTracker tracker, double p, long need) {
        switch (scope) {
            case TARGET_CONSENSUS:
                return tracker.consensusTargetPercentileNanos(p, need);
            case TARGET_MEDIAN:
                return tracker.medianTargetPercentileNanos(p, need);
            case PREVIOUS_TARGET:
                String prev = context.previousTarget();
                return prev != null && tracker.sampleCount(prev) >= need ? tracker.percentileNanos(p, prev) : -1;
            case CLUSTER:
            default:
                return -1;
        }
    }

    private long clamp(long v) {
        return v < minNanos ? minNanos : Math.min(v, maxNanos);
    }

    /** @return the percentile, a fraction in (0, 1) */
    public double percentile() {
        return percentile;
    }

    /** @return the smallest delay returned once warmed up */
    public Duration min() {
        return min;
    }

    /** @return the largest delay returned */
    public Duration max() {
        return max;
    }

    /**
     * @return samples needed before the percentile is used, as configured (the percentile also
     *     needs {@code 1 / (1 - percentile)} of them)
     */
    public long minSamples() {
        return minSamples;
    }

    /** @return the policy used while warming up */
    public DelayPolicy fallback() {
        return fallback;
    }

    /** @return which samples the percentile is taken over */
    public Scope scope() {
        return scope;
    }

    /**
     * How many samples a latency window should keep for this percentile to be estimated well: 300
     * beyond it, {@code 300 / (1 - p)}, within [1,000, 300,000]. The executor's own tracker, and any
     * built with {@link LatencyTracker.Builder#sizedFor(DelayPolicy)}, keeps that many ({@link
     * LatencyTracker.Builder#minWindowSamples(long)}). Why 300: on a steep tail
     * the hedged p99.9 moves almost one for one with the delay, so the delay's own sampling error
     * shows; with 100, hedge-benchmarks' sweep had {@code lognormal:0,2} at a 1% budget at up to
     * 1.062x the oracle's p99.9 (seed 4), with 300 at most 1.045x ({@code
     * docs/benchmarks.md#other-request-rates}).
     *
     * @return samples
     */
    @Override
    public long windowSamples() {
        return (long) Math.max(1_000, Math.min(300_000, Math.ceil(300 / (1 - percentile))));
    }

    /** @return whether the percentile aims at less demand while the budget runs low */
    public boolean budgetFeedback() {
        return budgetFeedback;
    }

    @Override
    public String toString() {
        return "percentile(" + percentile + ", min " + min + ", max " + max + ", minSamples " + minSamples + ", scope "
                + scope + (budgetFeedback ? ", budget feedback" : "") + ", fallback " + fallback + ")";
    }

    /**
     * Builds a {@link PercentileDelay}; each setter validates at once. Not thread-safe; {@link #build()}
     * copies, so a builder can be reused.
     */
    public static final class Builder {
        private final double percentile;
        private Duration min = Duration.ZERO;
        private Duration max = Duration.ofSeconds(10);
        private long minSamples = 100;
        private DelayPolicy fallback;
        private Scope scope = Scope.TARGET_CONSENSUS;
        private boolean budgetFeedback;

        private Builder(double p) {
            this.percentile = Checks.openRange("percentile", p, 0.0, 1.0);
        }

        /**
         * @param min the smallest delay once warmed up (Cassandra's {@code MAX(p, min)}); >= 0; default 0
         * @return this
         */
        public Builder min(Duration min) {
            this.min = Checks.nonNegative("min", min);
            return this;
        }

        /**
         * @param max the largest delay (Cassandra's {@code MIN(p, max)}); > 0; default 10 s
         * @return this
         */
        public Builder max(Duration max) {
            this.max = Checks.positive("max", max);
            return this;
        }

        /**
         * @param minSamples samples in the window before the percentile is trusted; >= 1; default 100
         * @return this
         */
        public Builder minSamples(long minSamples) {
            this.minSamples = Checks.atLeast("minSamples", minSamples, 1);
            return this;
        }

        /**
         * @param fallback the policy used while warming up, used as it returns (not clamped); default:
         *     the built-in warm-up bound (the class comment), clamped to {@code [min, max]} like the
         *     percentile; {@link DelayPolicy#never()} hedges nothing before the first estimate
         * @return this
         */
        public Builder fallback(DelayPolicy fallback) {
            this.fallback = Objects.requireNonNull(fallback, "fallback must not be null");
            return this;
        }

        /**
         * @param scope which samples the percentile is taken over; default {@link Scope#TARGET_CONSENSUS}
         * @return this
         */
        public Builder scope(Scope scope) {
            this.scope = Objects.requireNonNull(scope, "scope must not be null");
            return this;
        }

        /**
         * @param feedback whether to aim at less demand while the call's budget runs low (default
         *     {@code false}; {@link HedgeConfig.Builder#maxExtraLoad(double)} turns it on): while the
         *     budget's bucket is less than an eighth full ({@link DelayContext#budgetFill()}) the
         *     delay is the {@code 1 - (1 - p) * k} percentile, k = 0.8 below an eighth, 0.6 below a
         *     sixteenth, 0.4 below a thirty-second (a quarter, an eighth and a sixteenth before the
         *     minimum burst grew to 75 tokens: on a steep tail each step raises the delay by a fifth,
         *     and the hedged p99.9 with it, so it should act only near empty). At the
         *     {@code (1 - ratio)} percentile, demand for hedges equals the budget's supply on average,
         *     so the bucket random-walks and every time it touches zero a slow call is denied its
         *     hedge; aiming a little lower while it is low lets it refill, so a budget on a
         *     stationary load almost never denies (hedge-benchmarks' sweep). With a target-based
         *     scope the delay is also at least the pooled {@code 1 - ratio} percentile ({@code 1 -
         *     0.8 ratio} while the bucket is low, unless that more than doubles it: a slow mode then
         *     lies between the two levels, and the step would delay its calls' hedges without saving
         *     them): demand is what all the traffic asks for, and one target that stalls a share of
         *     its calls would otherwise ask for more than the budget supplies. Not the pooled {@code p}, when higher: the stalls of one target would lie
         *     above it when they are a little over {@code 1 - p} of all calls, and wait for it.
         *     From the first samples on, warm-up included, the delay is also at least the pooled percentile
         *     at which demand meets the budget's supply ({@link HedgeBudget#supply(long)} over the window's
         *     samples, the cold-start tokens spread over their repayment), lowered by one standard error of
         *     the share of samples above it, so that few samples cannot lift it into a slow target's mode
         *     ({@link DelaySource#BUDGET} when it decides). A new executor whose warm-up bound asks for more
         *     hedges than the budget pays for thus raises its delay instead of being denied its slowest
         *     calls' hedges. A budget that does not pay for 5 hedges over as many calls
         *     as the window holds samples ({@link DelayContext#budgetHedgesOver(long)}: the
         *     executor's budget below a 1.25% ratio starts with fewer tokens) sends no warm-up
         *     hedge, since the samples cannot yet support a percentile that high and the hedges
         *     would be refused. The pooled floor and the supply floor apply only while the bucket
         *     is less than half full: a fuller bucket can pay for more hedges for a while, and a
         *     full one loses its deposits. So when a slow target recovers, the delay returns to the
         *     targets' own percentile once the bucket has refilled to half (seconds), not when the
         *     window forgets the slow samples (30 s)
         * @return this
         */
        public Builder budgetFeedback(boolean feedback) {
            this.budgetFeedback = feedback;
            return this;
        }

        /**
         * @return the policy
         * @throws IllegalArgumentException if {@code min > max}
         */
        public PercentileDelay build() {
            Checks.ordered("min", min, "max", max);
            return new PercentileDelay(this);
        }
    }
}

package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The {@code transient} scenario: hedging from a cold start. Each cell is a service (a latency
 * distribution of three replicas, or three replicas of which the third stalls a share of its
 * calls), an arrival rate R (Poisson, calls per virtual second) and a call count N. For every seed
 * a fresh executor serves exactly N calls, its first N; the latencies of those calls are pooled
 * over all seeds. On the same draws (same seeds; per call the same arrival, primary replica,
 * hedge choice and per-attempt latencies) it compares:
 *
 * <ul>
 *   <li>{@code hedged}: the real executor with {@code HedgeConfig.builder().maxExtraLoad(b)} and
 *       the library's defaults otherwise (warm-up delay, cold-start tokens), fresh per seed;
 *   <li>{@code fixed(d)}, the hindsight fixed delay: the real executor with {@code
 *       DelayPolicy.fixed(d)} and {@link HedgeBudget#unlimited()} (no budget, like grpc-java's
 *       native hedging), fresh per seed, with the d that gives it the pooled extra load the hedged
 *       variant had in that cell. With no budget, fixed(d) hedges exactly the calls whose primary
 *       has not answered after d, so its extra load is the share of primaries above d: d is read
 *       from the sorted pooled primary latencies (the achievable count of hedges nearest the hedged
 *       variant's, d half-way between the two primaries around it), then the real executor runs
 *       with it and its measured extra load is reported beside the prediction.
 * </ul>
 *
 * The target: the hedged p99 and p99.9 at most {@value #TARGET} times the hindsight fixed delay's,
 * in every cell. Latencies and delays are in ms (whole nanoseconds in virtual time).
 *
 * <p>To tell cold-start effects from steady-state ones, each cell also reports the hedged calls that
 * started while the executor had no delay yet (no hedge possible), the mean delay the others started
 * with, and the hedged calls slower than the fixed variant's p99 and p99.9 by cause: no delay,
 * hedge denied by the budget, hedge deferred by the budget, delay above d, or none of those, and how
 * many of them were among the first {@code 4 * coldStartTokens(b) / b} calls of their executor (1,600
 * at b = 0.05: the calls a quarter of whose deposits repay the budget's cold-start tokens). The
 * delay of a call is read with {@code HedgedExecutor.currentDelayNanos()} at the instant it starts,
 * where the call reads it too, so reading it changes nothing.
 *
 * <p>Not thread-safe: cells and seeds run one after the other on the calling thread, each executor
 * on its own {@link VirtualTimeScheduler}. Deterministic for given settings.
 */
public final class TransientSim {
    /** The largest hedged/fixed ratio at p99 and p99.9 a cell may have to pass. */
    static final double TARGET = 1.10;

    /** The default call counts N: the first N calls of each executor's life. */
    static final long[] DEFAULT_CALLS = {200, 1000, 10_000};

    /** The default arrival rates, calls per virtual second. */
    static final double[] DEFAULT_RATES = {1, 10, 100, 1000};

    /** The default stall of the third replica: share of its attempts, least and most added ms. */
    static final double[] DEFAULT_STALL = {0.10, 40, 250};

    /** The default service under the stall: the README demo's lognormal, median 2 ms, sigma 0.5. */
    static final String DEFAULT_STALL_BASE = "lognormal:0.693147,0.5";

    /** The replica that stalls: the third. */
    static final int STALL_REPLICA = 2;

    /**
     * Three replicas answering after a draw from one distribution, the third adding a stall of
     * uniform length in [{@code stallMinMs}, {@code stallMaxMs}] to a share {@code stallShare} of
     * the attempts it gets (0: no stall). Immutable.
     */
    public static final class Service {
        final Distribution dist;
        final double stallShare;
        final double stallMinMs;
        final double stallMaxMs;

        private Service(Distribution dist, double stallShare, double stallMinMs, double stallMaxMs) {
            this.dist = dist;
            this.stallShare = stallShare;
            this.stallMinMs = stallMinMs;
            this.stallMaxMs = stallMaxMs;
        }

        /**
         * @param dist every replica's latency distribution
         * @return three identical replicas
         */
        public static Service of(Distribution dist) {
            return new Service(dist, 0, 0, 0);
        }

        /**
         * @param base every replica's latency distribution before the stall
         * @param share the share of the third replica's attempts that stall, in (0, 1]
         * @param minMs the least stall, ms
         * @param maxMs the longest stall, ms, {@code >= minMs}
         * @return three replicas, the third stalling
         */
        public static Service stalling(Distribution base, double share, double minMs, double maxMs) {
            if (!(share > 0 && share <= 1 && minMs >= 0 && maxMs >= minMs)) {
                throw new IllegalArgumentException(
                        "stall needs a share in (0, 1] and 0 <= min <= max, was " + share + "," + minMs + "," + maxMs);
            }
            return new Service(base, share, minMs, maxMs);
        }

        /** @return whether the third replica stalls */
        public boolean stalls() {
            return stallShare > 0;
        }

        /** @return a short name: the SPEC, prefixed by the stall when there is one */
        public String name() {
            if (!stalls()) {
                return dist.spec();
            }
            return "stall3:" + num(stallShare) + "," + num(stallMinMs) + "," + num(stallMaxMs) + "+" + dist.spec();
        }

        private static String num(double v) {
            return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
        }

        /**
         * @param calls how many calls
         * @param ratePerSecond Poisson arrival rate
         * @param seed the seed
         * @return the draws of one seed
         */
        Draws draw(int calls, double ratePerSecond, long seed) {
            Workload w = new Workload(dist, calls, ratePerSecond, 2, seed);
            double[][] stall = null;
            if (stalls()) {
                // a stream of its own, so the base draws are the tail scenario's for the same seed
                SplittableRandom r = new SplittableRandom(seed ^ 0x5DEECE66DL);
                stall = new double[2][calls];
                for (int i = 0; i < calls; i++) {
                    for (int k = 0; k < 2; k++) {
                        boolean stalled = r.nextDouble() < stallShare;
                        double u = r.nextDouble();
                        stall[k][i] = stalled ? stallMinMs + (stallMaxMs - stallMinMs) * u : 0;
                    }
                }
            }
            return new Draws(w, stall);
        }
    }

    /** One seed's draws: the workload, and the stall each attempt would get on the third replica. */
    static final class Draws {
        final Workload workload;
        private final double[][] stallMs;

        Draws(Workload workload, double[][] stallMs) {
            this.workload = workload;
            this.stallMs = stallMs;
        }

        double latencyMs(int attempt, int request, int replica) {
            double ms = workload.latencyMs(attempt, request);
            return stallMs != null && replica == STALL_REPLICA ? ms + stallMs[attempt - 1][request] : ms;
        }

        /** @return the primary's latency in virtual nanoseconds, as the backend schedules it */
        long primaryNanos(int request) {
            int replica = workload.replicaFor(1, request, List.of());
            return Workload.nanos(latencyMs(1, request, replica));
        }

        ExecutorRun.Backend backend() {
            return ExecutorRun.timed(
                    workload, (k, req, replica, now) -> latencyMs(k, req, replica), new ExecutorRun.AttemptTime());
        }
    }

    /** Settings of one run over the grid. Immutable. */
    public static final class Config {
        final List<Service> services;
        final long[] calls;
        final double[] rates;
        final double budget;
        final int seeds;
        final long firstSeed;

        /**
         * @param services the services, one block of cells each
         * @param calls the call counts N, each at least 1
         * @param rates the arrival rates R, calls per virtual second
         * @param budget b: the hedged variant's {@code maxExtraLoad}
         * @param seeds seeds per cell
         * @param firstSeed the first seed; a cell uses {@code firstSeed .. firstSeed + seeds - 1}
         */
        public Config(List<Service> services, long[] calls, double[] rates, double budget, int seeds, long firstSeed) {
            this.services = List.copyOf(services);
            this.calls = calls.clone();
            this.rates = rates.clone();
            this.budget = budget;
            this.seeds = seeds;
            this.firstSeed = firstSeed;
        }

        int cells() {
            return services.size() * calls.length * rates.length;
        }
    }

    /** The pooled counters of one variant over a cell's seeds. */
    static final class Counts {
        long calls;
        long attempts;
        long hedgesSent;
        long hedgesWon;
        long budgetDenied;
        long failures;

        void add(HedgeStats s, int failed) {
            calls += s.calls();
            attempts += s.attempts();
            hedgesSent += s.hedgesSent();
            hedgesWon += s.hedgesWon();
            budgetDenied += s.budgetDenied();
            failures += failed;
        }

        /** @return attempts per call minus one */
        double extraLoad() {
            return calls == 0 ? 0 : (double) attempts / calls - 1;
        }
    }

    /**
     * The hedged variant's calls slower than a threshold (the hindsight fixed delay's p99 or p99.9),
     * by why they were not faster: what makes the hedged tail longer than the fixed one.
     */
    static final class Tail {
        /** the threshold, ms */
        double thresholdMs;
        /** hedged calls above it */
        long calls;
        /** of those, started while the executor had no delay: no hedge possible (cold start) */
        long noDelay;
        /** had a delay shorter than the primary but sent no hedge: the budget denied it */
        long denied;
        /** sent its hedge later than its delay: deferred by the budget until a token came */
        long late;
        /** started with a delay longer than the hindsight d (not hedged, or hedged later than d) */
        long delayAboveD;
        /** hedged on time at a delay up to d, and the hedge was slow too */
        long other;
        /** the calls of an executor's life that count as early: its cold-start tokens' repayment */
        int earlyCalls;
        /** of the calls above, those among the first {@link #earlyCalls} of their executor */
        long early;
        /** of the denied and deferred ones, those among the first {@link #earlyCalls} */
        long earlyBudget;

        /**
         * @param c the hedged variant's calls
         * @param thresholdMs the threshold, ms
         * @param dNanos the hindsight delay, ns
         * @param earlyCalls how many calls of an executor's life count as early
         * @return the calls above the threshold by cause
         */
        static Tail of(HedgedCalls c, double thresholdMs, long dNanos, int earlyCalls) {
            Tail t = new Tail();
            t.thresholdMs = thresholdMs;
            t.earlyCalls = earlyCalls;
            for (int i = 0; i < c.n; i++) {
                if (c.latencyMs[i] <= thresholdMs) {
                    continue;
                }
                t.calls++;
                boolean early = c.index[i] < earlyCalls;
                if (early) {
                    t.early++;
                }
                long delay = c.startDelay[i];
                if (delay == DelayPolicy.NO_HEDGE) {
                    t.noDelay++;
                } else if (c.hedgeAfter[i] < 0 && c.primaryNanos[i] > delay) {
                    t.denied++;
                    t.earlyBudget += early ? 1 : 0;
                } else if (c.hedgeAfter[i] > delay) {
                    t.late++;
                    t.earlyBudget += early ? 1 : 0;
                } else if (delay > dNanos) {
                    t.delayAboveD++;
                } else {
                    t.other++;
                }
            }
            return t;
        }

        void writeTo(Json j, String name) {
            j.beginObject(name)
                    .field("threshold_ms", Percentiles.round(thresholdMs))
                    .field("hedged_calls_above", calls)
                    .field("no_delay", noDelay)
                    .field("budget_denied", denied)
                    .field("hedge_deferred", late)
                    .field("delay_above_d", delayAboveD)
                    .field("other", other)
                    .field("early_calls", earlyCalls)
                    .field("in_early_calls", early)
                    .field("budget_denied_or_deferred_in_early_calls", earlyBudget)
                    .endObject();
        }
    }

    /**
     * The hedged variant's calls pooled over a cell's seeds, per call: its latency (ms), the delay
     * it started with ({@link DelayPolicy#NO_HEDGE}: none), when its hedge started after it did (-1:
     * no hedge), its primary's latency (ns) and its index in its executor's life.
     */
    static final class HedgedCalls {
        final double[] latencyMs;
        final long[] startDelay;
        final long[] hedgeAfter;
        final long[] primaryNanos;
        final int[] index;
        int n;

        HedgedCalls(int capacity) {
            latencyMs = new double[capacity];
            startDelay = new long[capacity];
            hedgeAfter = new long[capacity];
            primaryNanos = new long[capacity];
            index = new int[capacity];
        }

        void add(double ms, long delay, long hedgeAfterNanos, long primary, int i) {
            latencyMs[n] = ms;
            startDelay[n] = delay;
            hedgeAfter[n] = hedgeAfterNanos;
            primaryNanos[n] = primary;
            index[n++] = i;
        }
    }

    /** One cell's outcome. */
    static final class Cell {
        final Service service;
        final int calls;
        final double rate;
        final double budget;
        final int seeds;
        final long firstSeed;
        Percentiles unhedged;
        Percentiles hedged;
        Percentiles fixed;
        final Counts hedgedCounts = new Counts();
        final Counts fixedCounts = new Counts();
        /** the hindsight delay, ns */
        long fixedDelayNanos;
        /** the extra load fixed(d) has on the pooled primaries */
        double fixedPredictedLoad;
        /** calls that started before their executor's first answer, pooled */
        long callsBeforeFirstAnswer;
        /**
         * calls that started while the hedged executor's delay was {@link DelayPolicy#NO_HEDGE}
         * (its tracker showed no answer yet), pooled: they get no hedge
         */
        long callsWithoutDelay;
        /** the sum over the other calls of the delay they started with, ms */
        double delaySumMs;
        /** the hedged calls above the fixed variant's p99 and p99.9, by cause */
        Tail tail99;
        /** see {@link #tail99} */
        Tail tail999;

        double seconds;

        Cell(Service service, int calls, double rate, double budget, int seeds, long firstSeed) {
            this.service = service;
            this.calls = calls;
            this.rate = rate;
            this.budget = budget;
            this.seeds = seeds;
            this.firstSeed = firstSeed;
        }

        /** @return the mean delay the hedged variant's calls started with, over those that had one, ms */
        double meanDelayMs() {
            long with = hedgedCounts.calls - callsWithoutDelay;
            return with == 0 ? Double.NaN : delaySumMs / with;
        }

        /** @return the share of calls that started with no delay (no hedge possible) */
        double withoutDelayShare() {
            return hedgedCounts.calls == 0 ? 0 : (double) callsWithoutDelay / hedgedCounts.calls;
        }

        double ratio99() {
            return hedged.at(0.99) / fixed.at(0.99);
        }

        double ratio999() {
            return hedged.at(0.999) / fixed.at(0.999);
        }

        boolean pass() {
            return ratio99() <= TARGET && ratio999() <= TARGET;
        }

        String id() {
            return service.name() + " R=" + num(rate) + " N=" + calls;
        }
    }

    private TransientSim() {}

    /**
     * Runs every cell (services, then rates, then call counts), printing its table row as soon as
     * it is done and, when {@code json} is not null, its JSON line; then the summary.
     *
     * @param c the settings
     * @param out where the table goes
     * @param json where the JSON lines go, or null
     * @return whether every cell passed
     */
    public static boolean run(Config c, PrintStream out, PrintStream json) {
        Summary summary = new Summary();
        out.printf(
                "transient: the first N calls of a fresh executor per seed, %d seeds (%d..%d) pooled per cell;"
                        + " maxExtraLoad(%s) against the hindsight fixed(d) with no budget at the same extra load;"
                        + " target hedged <= %.2fx fixed at p99 and p99.9 (latencies in ms)%n",
                c.seeds, c.firstSeed, c.firstSeed + c.seeds - 1, num(c.budget), TARGET);
        out.println(header());
        out.flush();
        int done = 0;
        long t0 = System.nanoTime();
        for (Service s : c.services) {
            for (double rate : c.rates) {
                for (long n : c.calls) {
                    Cell cell = runCell(s, (int) n, rate, c.budget, c.seeds, c.firstSeed);
                    done++;
                    summary.add(cell);
                    out.println(row(cell));
                    out.flush();
                    if (json != null) {
                        json.println(json(cell));
                        json.flush();
                    }
                    double elapsed = (System.nanoTime() - t0) / 1e9;
                    HedgeSim.log(String.format(
                            "transient [%d/%d] %s: %.1f s (%.0f s in all)",
                            done, c.cells(), cell.id(), cell.seconds, elapsed));
                }
            }
        }
        out.println(summary.line());
        if (json != null) {
            json.println(summary.json());
            json.flush();
        }
        return summary.misses.isEmpty();
    }

    /**
     * Runs one cell: the hedged variant over every seed, then the hindsight fixed delay over the
     * same seeds.
     *
     * @param service the replicas
     * @param calls N, the calls each executor serves
     * @param rate R, calls per virtual second
     * @param budget b
     * @param seeds how many seeds
     * @param firstSeed the first seed
     * @return the cell
     */
    static Cell runCell(Service service, int calls, double rate, double budget, int seeds, long firstSeed) {
        long t0 = System.nanoTime();
        Cell cell = new Cell(service, calls, rate, budget, seeds, firstSeed);
        int pooled = Math.multiplyExact(calls, seeds);
        HedgedCalls hedged = new HedgedCalls(pooled);
        double[] primaries = new double[pooled];
        long[] primaryNanos = new long[pooled];
        for (int s = 0; s < seeds; s++) {
            Draws d = service.draw(calls, rate, firstSeed + s);
            VirtualTimeScheduler clock = new VirtualTimeScheduler();
            HedgedExecutor executor = ExecutorRun.executor(
                    "transient-hedged", HedgeConfig.builder().maxExtraLoad(budget), clock);
            long[] delays = new long[calls];
            long[] hedgeStarts = new long[calls];
            Arrays.fill(hedgeStarts, -1);
            int[] next = {0};
            ExecutorRun.Backend backend = d.backend();
            ExecutorRun.Result r = ExecutorRun.run(
                    executor,
                    d.workload,
                    (req, ctx, cl) -> {
                        if (ctx.attemptNumber() == 2) {
                            hedgeStarts[req] = cl.nanoTime();
                        }
                        return backend.start(req, ctx, cl);
                    },
                    clock,
                    // the delay a call starting now gets, read where the call reads it (same
                    // instant, same tracker refresh), so reading it changes nothing
                    now -> delays[next[0]++] = executor.currentDelayNanos());
            cell.hedgedCounts.add(r.stats, r.failures);
            long firstAnswer = Long.MAX_VALUE;
            for (int i = 0; i < calls; i++) {
                long start = d.workload.arrivalNanos(i);
                long p = d.primaryNanos(i);
                primaryNanos[s * calls + i] = p;
                primaries[s * calls + i] = p / 1e6;
                if (delays[i] == DelayPolicy.NO_HEDGE) {
                    cell.callsWithoutDelay++;
                } else {
                    cell.delaySumMs += delays[i] / 1e6;
                }
                double ms = r.latencyMs[i];
                if (!Double.isNaN(ms)) {
                    firstAnswer = Math.min(firstAnswer, start + Workload.nanos(ms));
                    hedged.add(ms, delays[i], hedgeStarts[i] < 0 ? -1 : hedgeStarts[i] - start, p, i);
                }
            }
            for (int i = 0; i < calls && d.workload.arrivalNanos(i) < firstAnswer; i++) {
                cell.callsBeforeFirstAnswer++;
            }
        }
        cell.hedged = new Percentiles(hedged.latencyMs, hedged.n);
        cell.unhedged = new Percentiles(primaries);

        Arrays.sort(primaryNanos);
        long wanted = cell.hedgedCounts.attempts - cell.hedgedCounts.calls;
        int k = achievableHedges(primaryNanos, wanted);
        cell.fixedDelayNanos = delayForHedges(primaryNanos, k);
        cell.fixedPredictedLoad = (double) k / pooled;

        double[] fixed = new double[pooled];
        int fixedOk = 0;
        for (int s = 0; s < seeds; s++) {
            Draws d = service.draw(calls, rate, firstSeed + s);
            ExecutorRun.Result r = ExecutorRun.run(
                    "transient-fixed",
                    HedgeConfig.builder()
                            .delay(DelayPolicy.fixed(Duration.ofNanos(cell.fixedDelayNanos)))
                            .budget(HedgeBudget.unlimited()),
                    d.workload,
                    d.backend(),
                    new VirtualTimeScheduler(),
                    null);
            cell.fixedCounts.add(r.stats, r.failures);
            for (int i = 0; i < calls; i++) {
                if (!Double.isNaN(r.latencyMs[i])) {
                    fixed[fixedOk++] = r.latencyMs[i];
                }
            }
        }
        cell.fixed = new Percentiles(fixed, fixedOk);
        // the calls a quarter of whose deposits repay the cold-start tokens (HedgeBudget): 1,600 at b = 0.05
        int early = (int) Math.ceil(4 * HedgeBudget.coldStartTokens(budget) / budget);
        cell.tail99 = Tail.of(hedged, cell.fixed.at(0.99), cell.fixedDelayNanos, early);
        cell.tail999 = Tail.of(hedged, cell.fixed.at(0.999), cell.fixedDelayNanos, early);
        cell.seconds = (System.nanoTime() - t0) / 1e9;
        return cell;
    }

    /**
     * The count of hedges nearest {@code wanted} that some fixed delay sends: {@code k} primaries
     * above the delay needs the {@code k}-th longest primary to be longer than the next one (ties
     * cannot be split). Equally near: the larger count, so fixed(d) never gets less load by the
     * rounding.
     *
     * @param sortedNanos the pooled primary latencies, ascending
     * @param wanted the hedges wanted
     * @return k in [0, sortedNanos.length]
     */
    static int achievableHedges(long[] sortedNanos, long wanted) {
        int m = sortedNanos.length;
        int k0 = (int) Math.max(0, Math.min(m, wanted));
        for (int step = 0; ; step++) {
            if (k0 + step <= m && achievable(sortedNanos, k0 + step)) {
                return k0 + step;
            }
            if (k0 - step >= 0 && achievable(sortedNanos, k0 - step)) {
                return k0 - step;
            }
        }
    }

    private static boolean achievable(long[] sorted, int k) {
        int m = sorted.length;
        return k == 0 || k == m || sorted[m - k - 1] < sorted[m - k];
    }

    /**
     * @param sortedNanos the pooled primary latencies, ascending
     * @param k an {@linkplain #achievableHedges achievable} count of hedges
     * @return a delay, ns, with exactly {@code k} primaries longer than it: half-way between the
     *     primaries around it, so none ties with the hedge timer
     */
    static long delayForHedges(long[] sortedNanos, int k) {
        int m = sortedNanos.length;
        if (k == 0) {
            return sortedNanos[m - 1] + 1;
        }
        if (k == m) {
            return Math.max(0, sortedNanos[0] - 1);
        }
        long lo = sortedNanos[m - k - 1];
        long hi = sortedNanos[m - k];
        return lo + (hi - lo) / 2;
    }

    static String header() {
        return String.format(
                "%-41s %5s %6s | %-17s | %-50s | %-35s | %-13s | %s",
                "service",
                "R/s",
                "N",
                "  unhedged",
                "  hedged p99    p99.9   extra  denied nodelay mean d",
                " fixed d    p99    p99.9   extra",
                "hedged/fixed",
                "1.10x");
    }

    static String row(Cell c) {
        return String.format(
                "%-41s %5s %6d | %8.3f %8.3f | %8.3f %8.3f %7.4f %6d %6.2f%% %7.3f | %7.3f %8.3f %8.3f %7.4f | %6.3f"
                        + " %6.3f | %s",
                c.service.name(),
                num(c.rate),
                c.calls,
                c.unhedged.at(0.99),
                c.unhedged.at(0.999),
                c.hedged.at(0.99),
                c.hedged.at(0.999),
                c.hedgedCounts.extraLoad(),
                c.hedgedCounts.budgetDenied,
                100 * c.withoutDelayShare(),
                c.meanDelayMs(),
                c.fixedDelayNanos / 1e6,
                c.fixed.at(0.99),
                c.fixed.at(0.999),
                c.fixedCounts.extraLoad(),
                c.ratio99(),
                c.ratio999(),
                c.pass() ? "PASS" : "MISS");
    }

    static String json(Cell c) {
        Json j = new Json().beginObject();
        j.field("scenario", "transient").field("service", c.service.name()).field("dist", c.service.dist.spec());
        if (c.service.stalls()) {
            j.beginObject("stall")
                    .field("replica", Workload.NAMES[STALL_REPLICA])
                    .field("share", c.service.stallShare)
                    .field("min_ms", c.service.stallMinMs)
                    .field("max_ms", c.service.stallMaxMs)
                    .endObject();
        }
        j.field("calls", c.calls)
                .field("rate", c.rate)
                .field("budget", c.budget)
                .field("seeds", c.seeds)
                .field("first_seed", c.firstSeed)
                .field("pooled_calls", c.hedgedCounts.calls)
                .field("calls_before_first_answer", c.callsBeforeFirstAnswer)
                .field("calls_without_delay", c.callsWithoutDelay);
        j.beginObject("unhedged");
        c.unhedged.writeTo(j);
        j.endObject();
        j.beginObject("hedged");
        c.hedged.writeTo(j);
        j.field("extra_load", Percentiles.round5(c.hedgedCounts.extraLoad()))
                .field("mean_delay_ms", Percentiles.round(c.meanDelayMs()))
                .field("hedges_sent", c.hedgedCounts.hedgesSent)
                .field("hedges_won", c.hedgedCounts.hedgesWon)
                .field("budget_denied", c.hedgedCounts.budgetDenied)
                .field("failures", c.hedgedCounts.failures)
                .endObject();
        j.beginObject("hindsight_fixed");
        c.fixed.writeTo(j);
        j.field("delay_ms", c.fixedDelayNanos / 1e6)
                .field("extra_load", Percentiles.round5(c.fixedCounts.extraLoad()))
                .field("extra_load_predicted", Percentiles.round5(c.fixedPredictedLoad))
                .field("hedges_sent", c.fixedCounts.hedgesSent)
                .field("hedges_won", c.fixedCounts.hedgesWon)
                .field("failures", c.fixedCounts.failures)
                .endObject();
        c.tail99.writeTo(j, "hedged_above_fixed_p99");
        c.tail999.writeTo(j, "hedged_above_fixed_p999");
        return j.field("hedged_p99_over_fixed", Percentiles.round(c.ratio99()))
                .field("hedged_p999_over_fixed", Percentiles.round(c.ratio999()))
                .field("ok_p99", c.ratio99() <= TARGET)
                .field("ok_p999", c.ratio999() <= TARGET)
                .field("pass", c.pass())
                .field("seconds", Percentiles.round(c.seconds))
                .endObject()
                .toString();
    }

    static String num(double v) {
        return Service.num(v);
    }

    /** The worst ratios over the cells, and the cells that missed. */
    static final class Summary {
        final java.util.List<String> misses = new java.util.ArrayList<>();
        int cells;
        double worst99;
        String worst99Cell = "";
        double worst999;
        String worst999Cell = "";
        double worstLoadGap;
        String worstLoadGapCell = "none";

        void add(Cell c) {
            cells++;
            if (c.ratio99() > worst99) {
                worst99 = c.ratio99();
                worst99Cell = c.id();
            }
            if (c.ratio999() > worst999) {
                worst999 = c.ratio999();
                worst999Cell = c.id();
            }
            double gap = Math.abs(c.fixedCounts.extraLoad() - c.hedgedCounts.extraLoad());
            if (gap > worstLoadGap) {
                worstLoadGap = gap;
                worstLoadGapCell = c.id();
            }
            if (!c.pass()) {
                misses.add(String.format("%s: p99 x%.3f, p99.9 x%.3f", c.id(), c.ratio99(), c.ratio999()));
            }
        }

        String line() {
            return String.format(
                    "summary: %d of %d cells PASS (hedged <= %.2fx the hindsight fixed delay at p99 and p99.9);"
                            + " worst p99 x%.3f (%s), worst p99.9 x%.3f (%s); largest extra-load gap %.5f (%s)%s",
                    cells - misses.size(),
                    cells,
                    TARGET,
                    worst99,
                    worst99Cell,
                    worst999,
                    worst999Cell,
                    worstLoadGap,
                    worstLoadGapCell,
                    misses.isEmpty()
                            ? ""
                            : System.lineSeparator() + "MISS " + String.join(System.lineSeparator() + "MISS ", misses));
        }

        String json() {
            Json j = new Json().beginObject();
            j.field("scenario", "transient-summary")
                    .field("cells", cells)
                    .field("passed", cells - misses.size())
                    .field("target", TARGET)
                    .field("worst_hedged_p99_over_fixed", Percentiles.round(worst99))
                    .field("worst_p99_cell", worst99Cell)
                    .field("worst_hedged_p999_over_fixed", Percentiles.round(worst999))
                    .field("worst_p999_cell", worst999Cell)
                    .field("worst_extra_load_gap", Percentiles.round5(worstLoadGap))
                    .field("worst_extra_load_gap_cell", worstLoadGapCell);
            j.beginArray("missed");
            for (String m : misses) {
                j.value(m);
            }
            j.endArray();
            return j.endObject().toString();
        }
    }
}

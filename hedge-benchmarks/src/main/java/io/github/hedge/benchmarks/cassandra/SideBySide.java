package io.github.hedge.benchmarks.cassandra;

import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.noRows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.when;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import com.datastax.oss.simulacron.common.cluster.QueryLog;
import com.datastax.oss.simulacron.server.BoundNode;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.event.CallCompleted;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * hedge side by side with the driver's constant speculative-execution policy on one simulated
 * 3-node cluster (RF 3) whose per-(node, key) delays follow a Pareto distribution (a heavy tail),
 * in a closed loop of several lanes, each sending the next SELECT when the previous one answered.
 *
 * <ol>
 *   <li>{@code none}: no speculative execution;
 *   <li>{@code hedge}: {@link HedgedCqlSession} with its defaults (p96 delay, 5% budget), untuned;
 *   <li>{@code constant (hindsight)}: the driver's constant policy, 2 executions, 1 ms timer tick,
 *       with the delay chosen knowing the answer: the quantile of the {@code none} run's latency
 *       that gives hedge's measured extra load, then moved 1 ms at a time to the largest delay whose
 *       extra load is not below hedge's (hedge is compared at equal or lower extra load);
 *   <li>a 5x latency shift half-way through a run, for hedge and for the tuned constant policy:
 *       extra load per second after the shift.
 * </ol>
 *
 * <p>Every run starts with 3 s unmeasured on its own session (hedge learns its delay; nothing is
 * hedged at its warm-up delay until its tracker has 125 samples), then measures.
 *
 * <p>Usage: {@code SideBySide [seconds=15] [lanes=8] [keys=1000] [alpha=1.2]}. Prints Markdown. With
 * {@code --cold}, every configuration runs from the first call of a new session instead, its
 * first calls reported apart from the rest ({@link ColdSideBySide}).
 */
public final class SideBySide {
    static final String QUERY = "SELECT v FROM ks.t WHERE k = ";
    private static final long CAP_MS = 400;
    private static final int WARM_UP_SECONDS = 3;

    private SideBySide() {}

    private record Result(
            String name,
            Histogram latency,
            long requests,
            long executions,
            long[] extraPerSecond,
            long[] requestsPerSecond) {
        double extra() {
            return (double) (executions - requests) / requests;
        }

        String row() {
            return String.format(
                    Locale.ROOT,
                    "| %s | %d | %.1f | %.1f | %.1f | %.2f%% |",
                    name,
                    requests,
                    latency.getValueAtPercentile(50) / 1000.0,
                    latency.getValueAtPercentile(99) / 1000.0,
                    latency.getValueAtPercentile(99.9) / 1000.0,
                    100 * extra());
        }
    }

    /**
     * @param args seconds per run, lanes, keys, Pareto alpha
     * @throws Exception if the cluster cannot start
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--cold")) {
            cold(args);
            return;
        }
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        int lanes = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int keys = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        double alpha = args.length > 3 ? Double.parseDouble(args[3]) : 1.2;
        long[][] delays = delays(keys, alpha);
        try (SimulatedCluster cluster = new SimulatedCluster(3)) {
            prime(cluster, delays, keys, 1);
            run(cluster, "JIT warm-up", b -> b, s -> s, 2, lanes, keys, null, delays);
            Result none = run(cluster, "none", b -> b, s -> s, seconds, lanes, keys, null, delays);
            Result hedge = run(
                    cluster,
                    "hedge (defaults, untuned)",
                    b -> b,
                    HedgedCqlSession::wrap,
                    seconds,
                    lanes,
                    keys,
                    null,
                    delays);
            // the constant policy at equal or more extra load than hedge's, as close as the driver's
            // 1 ms delays allow: the largest delay whose extra load is not below hedge's, so that
            // hedge is compared "at equal or lower extra load". Start at the none run's quantile of
            // hedge's extra load; step down while below hedge's, up while the next delay stays above
            long d = Math.max(1, none.latency.getValueAtPercentile(100 * (1 - hedge.extra())) / 1000);
            Result constant = null;
            Result above = null; // the run with the largest delay whose extra load is >= hedge's
            long aboveDelay = -1;
            boolean up = false;
            for (int tries = 0; tries < 6 && d >= 1; tries++) {
                long delay = d;
                Result r = run(
                        cluster,
                        "driver constant, " + delay + " ms (hindsight)",
                        b -> constant(b, delay),
                        s -> s,
                        seconds,
                        lanes,
                        keys,
                        null,
                        delays);
                if (r.extra() >= hedge.extra()) {
                    if (aboveDelay < delay) {
                        above = r;
                        aboveDelay = delay;
                    }
                    if (tries > 0 && !up) {
                        break; // stepped down into it: the delay above was below hedge's
                    }
                    up = true;
                    d++;
                    System.err.println(r.row() + "  (extra load at or above hedge's: try +1 ms)");
                } else {
                    if (up) {
                        break; // one step too far: keep the previous delay
                    }
                    d--;
                    System.err.println(r.row() + "  (less extra load than hedge: -1 ms)");
                }
                constant = r;
            }
            if (above != null) {
                constant = above;
                d = aboveDelay;
            }
            long tuned = d;
            Result hedgeShift = run(
                    cluster,
                    "hedge, 5x shift at half time",
                    b -> b,
                    HedgedCqlSession::wrap,
                    2 * seconds,
                    lanes,
                    keys,
                    cluster,
                    delays);
            Result constantShift = run(
                    cluster,
                    "driver constant " + tuned + " ms, 5x shift at half time",
                    b -> constant(b, tuned),
                    s -> s,
                    2 * seconds,
                    lanes,
                    keys,
                    cluster,
                    delays);

            System.out.printf(
                    Locale.ROOT,
                    "%d lanes, closed loop, %d s per run, %d keys, per-(node, key) delay Pareto(1 ms, %.2f) capped"
                            + " at %d ms; latency in ms%n%n",
                    lanes,
                    seconds,
                    keys,
                    alpha,
                    CAP_MS);
            System.out.println("| configuration | requests | p50 | p99 | p99.9 | extra executions |");
            System.out.println("|---|---|---|---|---|---|");
            for (Result r : List.of(none, hedge, constant)) {
                System.out.println(r.row());
            }
            System.out.printf(
                    Locale.ROOT,
                    "%nhedge p99.9 / tuned constant p99.9 = %.2f at %.2f%% vs %.2f%% extra%n",
                    hedge.latency.getValueAtPercentile(99.9) / (double) constant.latency.getValueAtPercentile(99.9),
                    100 * hedge.extra(),
                    100 * constant.extra());
            System.out.printf(
                    "%nExtra executions per second after a 5x shift at t = %d s (%% of requests)%n%n", seconds);
            StringBuilder header = new StringBuilder("| t (s) |");
            StringBuilder sep = new StringBuilder("|---|");
            StringBuilder h = new StringBuilder("| hedge |");
            StringBuilder c = new StringBuilder("| constant |");
            for (int t = seconds - 2; t < 2 * seconds; t++) {
                header.append(' ').append(t - seconds).append(" |");
                sep.append("---|");
                h.append(String.format(Locale.ROOT, " %.1f |", percent(hedgeShift, t)));
                c.append(String.format(Locale.ROOT, " %.1f |", percent(constantShift, t)));
            }
            System.out.println(header);
            System.out.println(sep);
            System.out.println(h);
            System.out.println(c);
            System.out.printf(
                    Locale.ROOT,
                    "%nhedge back within 5.5%% (and staying) %s s after the shift; constant: %s%n",
                    settle(hedgeShift, seconds),
                    settle(constantShift, seconds));
            System.out.printf(
                    Locale.ROOT,
                    "averaged over every 5 s span from then on (as GrpcHedgeBench; a 1 s figure carries about"
                            + " +-0.6 pp of sampling noise), hedge within 5.5%% from second %s after the shift;"
                            + " constant: %s%n",
                    settleAveraged(hedgeShift, seconds),
                    settleAveraged(constantShift, seconds));
        }
    }

    /** Per-(node, key) delays: Pareto(xm = 1 ms, alpha), whole milliseconds, capped; the same every run. */
    static long[][] delays(int keys, double alpha) {
        long[][] delays = new long[3][keys];
        SplittableRandom random = new SplittableRandom(2024);
        for (int n = 0; n < 3; n++) {
            for (int k = 0; k < keys; k++) {
                // P(d > x) = x^-alpha
                delays[n][k] = Math.min(CAP_MS, Math.round(Math.pow(1 - random.nextDouble(), -1 / alpha)));
            }
        }
        return delays;
    }

    /** {@code --cold [--rounds 12] [--seconds 6] [--calls 2000] [--calibration-rounds 3] [--lanes 8] [--keys 1000] [--alpha 1.2]} */
    private static void cold(String[] args) throws Exception {
        int rounds = 12;
        int seconds = 6;
        int calls = 2000;
        int calibration = 3;
        int lanes = 8;
        int keys = 1000;
        double alpha = 1.2;
        for (int i = 1; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i++]) {
                case "--rounds" -> rounds = Integer.parseInt(value);
                case "--seconds" -> seconds = Integer.parseInt(value);
                case "--calls" -> calls = Integer.parseInt(value);
                case "--calibration-rounds" -> calibration = Integer.parseInt(value);
                case "--lanes" -> lanes = Integer.parseInt(value);
                case "--keys" -> keys = Integer.parseInt(value);
                case "--alpha" -> alpha = Double.parseDouble(value);
                default ->
                    throw new IllegalArgumentException("usage: SideBySide --cold [--rounds R] [--seconds S]"
                            + " [--calls N] [--calibration-rounds R] [--lanes L] [--keys K] [--alpha A]; unknown "
                            + args[i - 1]);
            }
        }
        if (rounds < 1 || seconds < 1 || calls < 1 || calibration < 1) {
            throw new IllegalArgumentException("--rounds, --seconds, --calls and --calibration-rounds must be >= 1");
        }
        long[][] delays = delays(keys, alpha);
        try (SimulatedCluster cluster = new SimulatedCluster(3)) {
            prime(cluster, delays, keys, 1);
            new ColdSideBySide(cluster, delays, lanes, keys, rounds, seconds, calls, calibration).run();
        }
    }

    private static double percent(Result r, int second) {
        return r.requestsPerSecond[second] == 0 ? 0 : 100.0 * r.extraPerSecond[second] / r.requestsPerSecond[second];
    }

    private static String settle(Result r, int shiftAt) {
        int last = 2 * shiftAt; // the run's last full second is 2 * shiftAt - 1
        for (int t = shiftAt; t < last; t++) {
            boolean ok = true;
            for (int u = t; u < last; u++) {
                ok &= percent(r, u) <= 5.5;
            }
            if (ok) {
                return String.valueOf(t - shiftAt + 1);
            }
        }
        return "never within the run";
    }

    /** The first second (0 = the second of the shift) from which every 5 s average is within 5.5%. */
    private static String settleAveraged(Result r, int shiftAt) {
        int last = 2 * shiftAt;
        for (int t = shiftAt; t + 5 <= last; t++) {
            boolean ok = true;
            for (int u = t; u + 5 <= last; u++) {
                long extra = 0;
                long requests = 0;
                for (int v = u; v < u + 5; v++) {
                    extra += r.extraPerSecond[v];
                    requests += r.requestsPerSecond[v];
                }
                ok &= requests > 0 && 100.0 * extra / requests <= 5.5;
            }
            if (ok) {
                return String.valueOf(t - shiftAt);
            }
        }
        return "never within the run";
    }

    static com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder constant(
            com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder b, long delayMs) {
        return b.withString(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, "ConstantSpeculativeExecutionPolicy")
                .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 2)
                .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, Duration.ofMillis(delayMs))
                .withDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(1));
    }

    private static void prime(SimulatedCluster cluster, long[][] delays, int keys, int factor) {
        List<BoundNode> nodes = cluster.nodes();
        for (int n = 0; n < nodes.size(); n++) {
            BoundNode node = nodes.get(n);
            node.clearPrimes(false);
            for (int k = 0; k < keys; k++) {
                long d = Math.min(CAP_MS * factor, delays[n][k] * factor);
                node.prime(when(QUERY + k).then(noRows()).delay(d, java.util.concurrent.TimeUnit.MILLISECONDS));
            }
        }
    }

    private static SimpleStatement select(int k) {
        return SimpleStatement.newInstance(QUERY + k)
                .setRoutingKeyspace("ks")
                .setRoutingKey(TypeCodecs.INT.encode(k, ProtocolVersion.DEFAULT))
                .setIdempotent(true);
    }

    private static Result run(
            SimulatedCluster cluster,
            String name,
            java.util.function.UnaryOperator<
                            com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder>
                    config,
            Function<CqlSession, CqlSession> wrap,
            int seconds,
            int lanes,
            int keys,
            SimulatedCluster shift,
            long[][] delays)
            throws InterruptedException {
        prime(cluster, delays, keys, 1);
        Histogram latency = new ConcurrentHistogram(3_600_000_000L, 3);
        AtomicLongArray extra = new AtomicLongArray(seconds + 2);
        AtomicLongArray requests = new AtomicLongArray(seconds + 2);
        try (CqlSession driver = cluster.session(config)) {
            CqlSession session = wrap.apply(driver);
            boolean hedged = session instanceof HedgedCqlSession;
            // every session runs WARM_UP_SECONDS unmeasured first: hedge learns its delay (nothing
            // is hedged at the warm-up delay until the tracker has 125 samples), the driver warms up
            long start = System.nanoTime() + WARM_UP_SECONDS * 1_000_000_000L;
            long end = start + seconds * 1_000_000_000L;
            if (hedged) {
                ((HedgedCqlSession) session).executor().events().subscribe(CallCompleted.class, c -> {
                    long since = System.nanoTime() - start;
                    if (since < 0) {
                        return;
                    }
                    int s = (int) (since / 1_000_000_000L);
                    extra.addAndGet(Math.min(s, seconds + 1), c.hedgesSent());
                    if (Boolean.getBoolean("sbs.debug") && c.totalNanos() > 60_000_000L) {
                        System.err.println("  slow call: " + c.attempts());
                    }
                });
                if (Boolean.getBoolean("sbs.debug")) {
                    ((HedgedCqlSession) session)
                            .executor()
                            .events()
                            .subscribe(
                                    io.github.hedge.core.event.NotHedged.class,
                                    n -> System.err.println("  not hedged: " + n.reason()));
                }
            }
            CountDownLatch done = new CountDownLatch(lanes);
            List<Thread> threads = new ArrayList<>();
            for (int l = 0; l < lanes; l++) {
                Thread t = new Thread(
                        () -> {
                            try {
                                while (System.nanoTime() < end) {
                                    int k = ThreadLocalRandom.current().nextInt(keys);
                                    long t0 = System.nanoTime();
                                    ResultSet rs = session.execute(select(k));
                                    long t1 = System.nanoTime();
                                    if (t0 < start) {
                                        continue;
                                    }
                                    latency.recordValue((t1 - t0) / 1000);
                                    int s = (int) Math.min(seconds + 1, (t1 - start) / 1_000_000_000L);
                                    requests.incrementAndGet(s);
                                    if (!hedged) {
                                        extra.addAndGet(s, rs.getExecutionInfo().getSpeculativeExecutionCount());
                                    }
                                }
                            } finally {
                                done.countDown();
                            }
                        },
                        "lane-" + l);
                t.start();
                threads.add(t);
            }
            Thread.sleep(Math.max(0, (start - System.nanoTime()) / 1_000_000));
            cluster.clearLogs(); // executions counted from here: the measured part
            if (shift != null) {
                Thread.sleep(seconds * 500L);
                prime(cluster, delays, keys, 5);
            }
            done.await();
            if (hedged) {
                HedgedCqlSession h = (HedgedCqlSession) session;
                System.err.printf(
                        Locale.ROOT,
                        "  %s: %s, delay now %.1f ms%n",
                        name,
                        h.executor().stats(),
                        h.executor().currentDelayNanos() / 1e6);
            }
        }
        long total = 0;
        for (BoundNode n : cluster.nodes()) {
            for (QueryLog log : n.getLogs().getQueryLogs()) {
                if (log.getQuery() != null && log.getQuery().startsWith(QUERY)) {
                    total++;
                }
            }
        }
        long[] e = new long[seconds + 2];
        long[] r = new long[seconds + 2];
        long count = 0;
        for (int i = 0; i < e.length; i++) {
            e[i] = extra.get(i);
            r[i] = requests.get(i);
            count += r[i];
        }
        Result result = new Result(name, latency, count, total, e, r);
        System.err.println(result.row());
        return result;
    }
}

package io.github.hedge.benchmarks.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import com.datastax.oss.simulacron.common.cluster.QueryLog;
import com.datastax.oss.simulacron.server.BoundNode;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.DelaySource;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.NotHedged;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.UnaryOperator;
import org.HdrHistogram.Histogram;

/**
 * {@link SideBySide} from a cold start: in every round each configuration gets a NEW session (the
 * wrapped session a new executor, tracker, budget and latency scores) measured from its very first
 * call; the first {@code --cold-calls} calls of each session (by start order) and the calls after
 * them are pooled apart over the rounds. Configurations: no speculative execution, {@link
 * HedgedCqlSession#wrap} with its defaults, and the driver's constant policy at a delay chosen in
 * hindsight before the first measured round (the largest whole millisecond whose extra load is not
 * below the wrapped session's in either part, found on calibration rounds of the same kind).
 *
 * <p>Every configuration sees the same latency draws: call i of round r reads key {@code
 * mix(r, i)}, whose delay on each node is fixed for the whole run. Executions are counted at the
 * simulated nodes, per call: each statement carries a custom payload (run, call index) that the
 * nodes' query logs keep, so a call's executions, the node each went to and when it arrived are
 * known exactly. The JVM is warm (every configuration runs unmeasured first).
 *
 * <p>Not thread-safe; one instance per run.
 */
final class ColdSideBySide {
    private static final String PAYLOAD = "hb";
    private static final int MAX_CALLS = 400_000;
    private static final int BUCKET = 250;

    enum Config {
        NONE("none"),
        HEDGE("hedge (defaults)"),
        CONSTANT("driver constant");

        final String label;

        Config(String label) {
            this.label = label;
        }
    }

    /** Figures of one (configuration, part), pooled over sessions. */
    static final class Part {
        final Histogram latency = new Histogram(3_600_000_000L, 3);
        long calls;
        long executions;
        long hedgedCalls;
        long failures;
        /** hedges whose node had, for that key, a primed delay no shorter than the primary's */
        long hedgesNoFaster;
        /** primaries sent to the key's slowest replica */
        long primariesOnSlowest;
        /** hedges per node */
        final long[] hedgesPerNode = new long[3];

        double extra() {
            return calls == 0 ? 0 : (double) (executions - calls) / calls;
        }

        double ms(double p) {
            return latency.getValueAtPercentile(p) / 1000.0;
        }
    }

    /** One call as the client and the nodes saw it. */
    record Call(int round, long index, int key, long latencyUs, int[] nodes, long[] receivedMs) {}

    /** What the wrapped session's executor did, by position of the call in its session. */
    static final class HedgeTrace {
        /** per bucket of {@link #BUCKET} calls (last: after the first part): samples per source */
        final long[][] sources;
        /** per bucket: the sampled delays, in microseconds */
        final List<List<Long>> delays = new ArrayList<>();
        /** per bucket: the budget's fill sampled with each delay ({@link HedgeBudget#fill()}), per mille */
        final List<List<Long>> fills = new ArrayList<>();
        /** per bucket: hedges sent, by reason */
        final long[][] sent;
        /** per bucket: hedges sent, their delay in microseconds */
        final List<List<Long>> sentDelays = new ArrayList<>();
        /** per bucket: NotHedged(BUDGET_EXHAUSTED) and BudgetExhausted events */
        final long[] notHedgedBudget;

        final long[] budgetExhausted;

        HedgeTrace(int buckets) {
            sources = new long[buckets][DelaySource.values().length + 1];
            sent = new long[buckets][HedgeSent.Reason.values().length];
            notHedgedBudget = new long[buckets];
            budgetExhausted = new long[buckets];
            for (int b = 0; b < buckets; b++) {
                delays.add(new ArrayList<>());
                fills.add(new ArrayList<>());
                sentDelays.add(new ArrayList<>());
            }
        }
    }

    private final SimulatedCluster cluster;
    private final long[][] delays;
    private final int lanes;
    private final int keys;
    private final int rounds;
    private final int seconds;
    private final int coldCalls;
    private final int calibrationRounds;
    private final int buckets;
    private final HedgeTrace trace;
    private final List<Call> slowest = new ArrayList<>();
    private long runIds;

    ColdSideBySide(
            SimulatedCluster cluster,
            long[][] delays,
            int lanes,
            int keys,
            int rounds,
            int seconds,
            int coldCalls,
            int calibrationRounds) {
        this.cluster = cluster;
        this.delays = delays;
        this.lanes = lanes;
        this.keys = keys;
        this.rounds = rounds;
        this.seconds = seconds;
        this.coldCalls = coldCalls;
        this.calibrationRounds = calibrationRounds;
        this.buckets = (coldCalls + BUCKET - 1) / BUCKET + 1;
        this.trace = new HedgeTrace(buckets);
    }

    private static long mix(long z) { // SplitMix64's finaliser
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    private int key(int round, long index) {
        return (int) Long.remainderUnsigned(mix(round * 0x9E3779B97F4A7C15L + index + 1), keys);
    }

    private static SimpleStatement select(int k, long run, long index) {
        ByteBuffer id = ByteBuffer.allocate(16).putLong(0, run).putLong(8, index);
        return SimpleStatement.newInstance(SideBySide.QUERY + k)
                .setRoutingKeyspace("ks")
                .setRoutingKey(TypeCodecs.INT.encode(k, ProtocolVersion.DEFAULT))
                .setIdempotent(true)
                .setCustomPayload(Map.of(PAYLOAD, id));
    }

    private int bucket(long index) {
        return (int) Math.min(buckets - 1, index / BUCKET);
    }

    /**
     * One new session of {@code config}, measured from its first call for {@link #seconds}.
     *
     * @param head figures of its first {@link #coldCalls} calls (null: not kept)
     * @param tail figures of the calls after them (null: not kept)
     * @param traced whether the wrapped session's executor is traced into {@link #trace}
     */
    void session(int round, Config config, long constantMs, Part head, Part tail, boolean traced)
            throws InterruptedException {
        long run = ++runIds;
        UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> driverConfig =
                config == Config.CONSTANT ? b -> SideBySide.constant(b, constantMs) : b -> b;
        AtomicLongArray latencyUs = new AtomicLongArray(MAX_CALLS);
        AtomicLong next = new AtomicLong();
        AtomicLong failures0 = new AtomicLong();
        AtomicLong failures1 = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        try (CqlSession driver = cluster.session(driverConfig)) {
            CqlSession session = config == Config.HEDGE ? HedgedCqlSession.wrap(driver) : driver;
            List<io.github.hedge.core.event.Subscription> subscriptions = new ArrayList<>();
            Thread sampler = null;
            if (config == Config.HEDGE && traced) {
                HedgedExecutor executor = ((HedgedCqlSession) session).executor();
                // events are placed by how many calls had started when they happened
                subscriptions.add(executor.events().subscribe(HedgeSent.class, e -> {
                    int b = bucket(next.get());
                    synchronized (trace) {
                        trace.sent[b][e.reason().ordinal()]++;
                        trace.sentDelays.get(b).add(e.delayNanos() / 1000);
                    }
                }));
                subscriptions.add(executor.events().subscribe(NotHedged.class, e -> {
                    if (e.reason() == NotHedged.Reason.BUDGET_EXHAUSTED) {
                        int b = bucket(next.get());
                        synchronized (trace) {
                            trace.notHedgedBudget[b]++;
                        }
                    }
                }));
                subscriptions.add(executor.events().subscribe(BudgetExhausted.class, e -> {
                    int b = bucket(next.get());
                    synchronized (trace) {
                        trace.budgetExhausted[b]++;
                    }
                }));
                sampler = new Thread(
                        () -> {
                            while (!stop.get()) {
                                int b = bucket(next.get());
                                long d = executor.currentDelayNanos();
                                DelaySource s = executor.currentDelaySource();
                                long fill = Math.round(1000 * executor.budget().fill());
                                synchronized (trace) {
                                    trace.sources[b][s == null ? DelaySource.values().length : s.ordinal()]++;
                                    trace.delays.get(b).add(d == DelayPolicy.NO_HEDGE ? -1 : d / 1000);
                                    trace.fills.get(b).add(fill);
                                }
                                try {
                                    Thread.sleep(5);
                                } catch (InterruptedException e) {
                                    return;
                                }
                            }
                        },
                        "delay-sampler");
                sampler.setDaemon(true);
            }
            cluster.clearLogs();
            List<Thread> threads = new ArrayList<>();
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            for (int l = 0; l < lanes; l++) {
                Thread t = new Thread(
                        () -> {
                            while (System.nanoTime() < end) {
                                long i = next.getAndIncrement();
                                if (i >= MAX_CALLS) {
                                    return;
                                }
                                int k = key(round, i);
                                long t0 = System.nanoTime();
                                try {
                                    session.execute(select(k, run, i));
                                } catch (RuntimeException e) {
                                    (i < coldCalls ? failures0 : failures1).incrementAndGet();
                                }
                                latencyUs.set((int) i, Math.max(1, (System.nanoTime() - t0) / 1000));
                            }
                        },
                        "lane-" + l);
                threads.add(t);
            }
            if (sampler != null) {
                sampler.start();
            }
            for (Thread t : threads) {
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            stop.set(true);
            if (sampler != null) {
                sampler.join();
            }
            subscriptions.forEach(io.github.hedge.core.event.Subscription::close);
            if (config == Config.HEDGE) {
                HedgedExecutor e = ((HedgedCqlSession) session).executor();
                System.err.printf(
                        Locale.ROOT,
                        "  round %d %s: %s, delay at the end %.1f ms (%s)%n",
                        round,
                        config.label,
                        e.stats(),
                        e.currentDelayNanos() / 1e6,
                        e.currentDelaySource());
            }
        }
        // executions per call, at the nodes, from the payload each statement carried
        int calls = (int) Math.min(MAX_CALLS, next.get());
        Map<Long, List<long[]>> perCall = new ConcurrentHashMap<>();
        List<BoundNode> nodes = cluster.nodes();
        long logged = 0;
        for (int n = 0; n < nodes.size(); n++) {
            for (QueryLog log : nodes.get(n).getLogs().getQueryLogs()) {
                if (log.getQuery() == null || !log.getQuery().startsWith(SideBySide.QUERY)) {
                    continue;
                }
                logged++;
                ByteBuffer id = log.getFrame().customPayload.get(PAYLOAD);
                if (id == null || id.duplicate().getLong(id.position()) != run) {
                    continue;
                }
                long index = id.duplicate().getLong(id.position() + 8);
                perCall.computeIfAbsent(index, x -> new ArrayList<>()).add(new long[] {n, log.getReceivedTimestamp()});
            }
        }
        long attributed = perCall.values().stream().mapToLong(List::size).sum();
        if (attributed != logged) {
            System.err.printf(
                    Locale.ROOT,
                    "  WARNING round %d %s: %d executions logged, %d with this run's payload%n",
                    round,
                    config.label,
                    logged,
                    attributed);
        }
        long[] counted = new long[2];
        for (int i = 0; i < calls; i++) {
            Part p = i < coldCalls ? head : tail;
            long lat = latencyUs.get(i);
            if (p == null || lat == 0) {
                continue; // not measured, or still running when the session closed (none: the loop waits)
            }
            List<long[]> ex = perCall.getOrDefault((long) i, new ArrayList<>());
            ex.sort((a, b) -> Long.compare(a[1], b[1]));
            int k = key(round, i);
            p.calls++;
            counted[i < coldCalls ? 0 : 1]++;
            p.latency.recordValue(lat);
            p.executions += ex.size();
            int[] ns = new int[ex.size()];
            long[] ms = new long[ex.size()];
            for (int j = 0; j < ex.size(); j++) {
                ns[j] = (int) ex.get(j)[0];
                ms[j] = ex.get(j)[1];
            }
            if (ns.length > 0) {
                int slowestNode = 0;
                for (int n = 1; n < 3; n++) {
                    if (delays[n][k] > delays[slowestNode][k]) {
                        slowestNode = n;
                    }
                }
                if (delays[ns[0]][k] == delays[slowestNode][k]) {
                    p.primariesOnSlowest++;
                }
            }
            if (ns.length > 1) {
                p.hedgedCalls++;
                for (int j = 1; j < ns.length; j++) {
                    p.hedgesPerNode[ns[j]]++;
                    if (delays[ns[j]][k] >= delays[ns[0]][k]) {
                        p.hedgesNoFaster++;
                    }
                }
            }
            if (i < coldCalls && head != null && lat >= 10_000) {
                slowest.add(new Call(round, i, k, lat, ns, ms));
            }
        }
        if (head != null) {
            head.failures += failures0.get();
        }
        if (tail != null) {
            tail.failures += failures1.get();
        }
        System.err.printf(
                Locale.ROOT,
                "  round %d %s%s: %d calls (%d + %d measured)%n",
                round,
                config.label,
                config == Config.CONSTANT ? " " + constantMs + " ms" : "",
                calls,
                counted[0],
                counted[1]);
        slowestByConfig.computeIfAbsent(config, c -> new ArrayList<>());
        if (head != null) {
            slowestByConfig.get(config).addAll(slowest);
        }
        slowest.clear();
    }

    private final Map<Config, List<Call>> slowestByConfig = new EnumMap<>(Config.class);

    /** Runs the calibration, the search for the constant delay and the cold rounds; prints the report. */
    void run() throws InterruptedException {
        // the JVM warm: every configuration once, unmeasured
        for (Config c : Config.values()) {
            session(-1, c, 20, null, null, false);
        }
        // calibration: cold sessions of none and hedge, of the same kind as the measured rounds
        Part[] calNone = {new Part(), new Part()};
        Part[] calHedge = {new Part(), new Part()};
        for (int r = 0; r < calibrationRounds; r++) {
            session(1000 + r, Config.NONE, 0, calNone[0], calNone[1], false);
            session(1000 + r, Config.HEDGE, 0, calHedge[0], calHedge[1], false);
        }
        slowestByConfig.clear();
        double target = Math.max(calHedge[0].extra(), calHedge[1].extra());
        Histogram none = calNone[0].latency.copy();
        none.add(calNone[1].latency);
        long d = Math.max(1, none.getValueAtPercentile(100 * (1 - target)) / 1000);
        System.err.printf(
                Locale.ROOT,
                "calibration: hedge extra load %.2f%% (first part) / %.2f%% (after); target %.2f%% -> start at %d ms%n",
                100 * calHedge[0].extra(),
                100 * calHedge[1].extra(),
                100 * target,
                d);
        // the largest delay whose extra load (over a whole cold session) is not below the target
        long best = -1;
        boolean up = false;
        List<String> search = new ArrayList<>();
        for (int tries = 0; tries < 5 && d >= 1; tries++) {
            Part all = new Part();
            session(2000 + tries, Config.CONSTANT, d, all, all, false);
            search.add(String.format(Locale.ROOT, "%d ms: %.2f%%", d, 100 * all.extra()));
            if (all.extra() >= target) {
                best = Math.max(best, d);
                if (tries > 0 && !up) {
                    break;
                }
                up = true;
                d++;
            } else {
                if (up) {
                    break;
                }
                d--;
            }
        }
        slowestByConfig.clear();
        long constantMs = best > 0 ? best : Math.max(1, d);

        Part[][] parts = new Part[Config.values().length][2];
        for (Part[] p : parts) {
            p[0] = new Part();
            p[1] = new Part();
        }
        Config[] configs = Config.values();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < configs.length; i++) {
                Config c = configs[(r + i) % configs.length];
                session(r, c, constantMs, parts[c.ordinal()][0], parts[c.ordinal()][1], true);
            }
        }
        report(parts, constantMs, target, search, calHedge);
    }

    private String label(Config c, long constantMs) {
        return c == Config.CONSTANT ? c.label + ", " + constantMs + " ms (hindsight)" : c.label;
    }

    private void report(Part[][] parts, long constantMs, double target, List<String> search, Part[] calHedge) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "SideBySide --cold: %d lanes, closed loop, %d keys, per-(node, key) delay Pareto(1 ms) capped at 400 ms;"
                        + " %d rounds, in each every configuration on a NEW session measured from its first call for"
                        + " %d s, configurations in turn, order rotated every round. The first %d calls of each"
                        + " session and the calls after them are pooled apart. Same key sequence (so the same"
                        + " latency draws) for every configuration in a round. Executions counted at the nodes, per"
                        + " call. Latency in ms.%n%n",
                lanes,
                keys,
                rounds,
                seconds,
                coldCalls));
        out.append(String.format(
                Locale.ROOT,
                "Constant policy's delay: %d ms, chosen before the first measured round on %d calibration rounds of"
                        + " the same kind: the largest whole millisecond whose extra load over a cold session is not"
                        + " below %.2f%%, the wrapped session's larger part (first part %.2f%%, after %.2f%%). Tried:"
                        + " %s.%n%n",
                constantMs,
                calibrationRounds,
                100 * target,
                100 * calHedge[0].extra(),
                100 * calHedge[1].extra(),
                String.join("; ", search)));
        out.append("| part | configuration | calls | p50 | p99 | p99.9 | max | extra executions | hedged calls |"
                + " failed |\n");
        out.append("|---|---|---|---|---|---|---|---|---|---|\n");
        String[] partNames = {"first " + coldCalls + " calls", "after them"};
        for (int k = 0; k < 2; k++) {
            for (Config c : Config.values()) {
                Part p = parts[c.ordinal()][k];
                out.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f%% | %d | %d |%n",
                        partNames[k],
                        label(c, constantMs),
                        p.calls,
                        p.ms(50),
                        p.ms(99),
                        p.ms(99.9),
                        p.latency.getMaxValue() / 1000.0,
                        100 * p.extra(),
                        p.hedgedCalls,
                        p.failures));
            }
        }
        out.append("\nTarget: hedge p99.9 <= 1.1x the constant policy's at equal extra load (equal: within 0.5 pp, or"
                + " hedge's lower), in both parts:\n\n");
        for (int k = 0; k < 2; k++) {
            Part h = parts[Config.HEDGE.ordinal()][k];
            Part c = parts[Config.CONSTANT.ordinal()][k];
            double diff = h.extra() - c.extra();
            double r999 = h.ms(99.9) / c.ms(99.9);
            out.append(String.format(
                    Locale.ROOT,
                    "- %s: hedge / constant p99 %.2f / %.2f ms = %.3fx, p99.9 %.1f / %.1f ms = %.3fx, at extra load"
                            + " %.2f%% vs %.2f%% (%s): %s%n",
                    partNames[k],
                    h.ms(99),
                    c.ms(99),
                    h.ms(99) / c.ms(99),
                    h.ms(99.9),
                    c.ms(99.9),
                    r999,
                    100 * h.extra(),
                    100 * c.extra(),
                    Math.abs(diff) <= 0.005
                            ? "equal within 0.5 pp"
                            : diff < 0 ? "hedge's lower" : "hedge's higher: not at equal extra load",
                    r999 <= 1.1 && diff <= 0.005 ? "MET" : "NOT MET"));
        }
        out.append("\nWhere the executions went (at the nodes; a key's delay on each node is known):\n\n");
        out.append("| part | configuration | hedges | to node 1 / 2 / 3 | hedges to a node no faster for that key than"
                + " the primary's | primaries on the key's slowest node |\n");
        out.append("|---|---|---|---|---|---|\n");
        for (int k = 0; k < 2; k++) {
            for (Config c : List.of(Config.HEDGE, Config.CONSTANT)) {
                Part p = parts[c.ordinal()][k];
                long hedges = Arrays.stream(p.hedgesPerNode).sum();
                out.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %d | %d / %d / %d | %.1f%% | %.1f%% |%n",
                        partNames[k],
                        label(c, constantMs),
                        hedges,
                        p.hedgesPerNode[0],
                        p.hedgesPerNode[1],
                        p.hedgesPerNode[2],
                        hedges == 0 ? 0 : 100.0 * p.hedgesNoFaster / hedges,
                        p.calls == 0 ? 0 : 100.0 * p.primariesOnSlowest / p.calls));
            }
        }
        traceReport(out);
        slowReport(out, parts, constantMs);
        System.out.print(out);
    }

    private static String median(List<Long> v) {
        if (v.isEmpty()) {
            return "-";
        }
        List<Long> s = new ArrayList<>(v);
        s.sort(null);
        long m = s.get(s.size() / 2);
        return m < 0 ? "none" : String.format(Locale.ROOT, "%.1f", m / 1000.0);
    }

    private static String range(List<Long> v) {
        if (v.isEmpty()) {
            return "-";
        }
        long min = v.stream().mapToLong(Long::longValue).min().getAsLong();
        long max = v.stream().mapToLong(Long::longValue).max().getAsLong();
        return min < 0
                ? "none-" + String.format(Locale.ROOT, "%.1f", max / 1000.0)
                : String.format(Locale.ROOT, "%.1f-%.1f", min / 1000.0, max / 1000.0);
    }

    private void traceReport(StringBuilder out) {
        out.append(String.format(
                Locale.ROOT,
                "%nThe wrapped session's executor by position in its session (measured rounds pooled): the delay it"
                        + " would give a call (sampled every 5 ms: source, median and range), the hedges it sent by"
                        + " reason with their median delay, budget refusals (NotHedged BUDGET_EXHAUSTED /"
                        + " BudgetExhausted), and the budget's fill (tokens over the bucket's cap, sampled with the"
                        + " delay: median, and the share of samples below an eighth, where the delay's feedback"
                        + " steps begin). Events are placed by how many calls had started when they happened.%n%n"));
        StringBuilder header = new StringBuilder("| calls | samples");
        for (DelaySource s : DelaySource.values()) {
            header.append(" | ").append(s);
        }
        header.append(
                " | delay median (ms) | delay range (ms) | sent: delay elapsed | budget deferred | previous"
                        + " failed | sent delay median (ms) | budget refused / exhausted | budget fill median | fill below 1/8 |\n");
        out.append(header);
        out.append("|---".repeat(DelaySource.values().length + 11)).append("|\n");
        for (int b = 0; b < buckets; b++) {
            long samples = Arrays.stream(trace.sources[b]).sum();
            StringBuilder row = new StringBuilder(
                    b == buckets - 1
                            ? "| " + coldCalls + "+"
                            : String.format(
                                    Locale.ROOT, "| %d-%d", b * BUCKET, Math.min(coldCalls, (b + 1) * BUCKET) - 1));
            row.append(" | ").append(samples);
            for (DelaySource s : DelaySource.values()) {
                row.append(String.format(
                        Locale.ROOT, " | %.0f%%", samples == 0 ? 0 : 100.0 * trace.sources[b][s.ordinal()] / samples));
            }
            row.append(" | ").append(median(trace.delays.get(b)));
            row.append(" | ").append(range(trace.delays.get(b)));
            row.append(" | ").append(trace.sent[b][HedgeSent.Reason.DELAY_ELAPSED.ordinal()]);
            row.append(" | ").append(trace.sent[b][HedgeSent.Reason.BUDGET_DEFERRED.ordinal()]);
            row.append(" | ").append(trace.sent[b][HedgeSent.Reason.PREVIOUS_FAILED.ordinal()]);
            row.append(" | ").append(median(trace.sentDelays.get(b)));
            row.append(" | ").append(trace.notHedgedBudget[b]).append(" / ").append(trace.budgetExhausted[b]);
            List<Long> fills = trace.fills.get(b);
            if (fills.isEmpty()) {
                row.append(" | - | - |\n");
            } else {
                List<Long> sorted = new ArrayList<>(fills);
                sorted.sort(null);
                long low = fills.stream().filter(f -> f < 125).count();
                row.append(String.format(
                        Locale.ROOT,
                        " | %.3f | %.0f%% |\n",
                        sorted.get((sorted.size() - 1) / 2) / 1000.0,
                        100.0 * low / fills.size()));
            }
            out.append(row);
        }
    }

    private void slowReport(StringBuilder out, Part[][] parts, long constantMs) {
        out.append(String.format(
                Locale.ROOT,
                "%nThe slowest calls of the first %d, per configuration (as many as the p99.9 leaves above it, plus"
                        + " 5): call index in its session, key, latency, and each execution as node(primed delay for"
                        + " the key) +ms after the first arrived.%n%n",
                coldCalls));
        for (Config c : List.of(Config.HEDGE, Config.CONSTANT)) {
            List<Call> calls = new ArrayList<>(slowestByConfig.getOrDefault(c, List.of()));
            calls.removeIf(x -> x.index() >= coldCalls);
            calls.sort((a, b) -> Long.compare(b.latencyUs(), a.latencyUs()));
            long n = parts[c.ordinal()][0].calls / 1000 + 5;
            out.append("- ").append(label(c, constantMs)).append(":\n");
            for (int i = 0; i < Math.min(n, calls.size()); i++) {
                Call x = calls.get(i);
                StringBuilder ex = new StringBuilder();
                for (int j = 0; j < x.nodes().length; j++) {
                    ex.append(String.format(
                            Locale.ROOT,
                            " node %d(%d ms) +%d",
                            x.nodes()[j] + 1,
                            delays[x.nodes()[j]][x.key()],
                            x.receivedMs()[j] - x.receivedMs()[0]));
                }
                out.append(String.format(
                        Locale.ROOT,
                        "  - round %d, call %d, key %d: %.1f ms;%s%n",
                        x.round(),
                        x.index(),
                        x.key(),
                        x.latencyUs() / 1000.0,
                        ex));
            }
        }
    }
}

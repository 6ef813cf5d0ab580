package io.github.hedge.benchmarks.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import io.github.hedge.cassandra.HedgeDriverOption;
import io.github.hedge.cassandra.HedgeLoadBalancingPolicy;
import io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.cassandra.LatencyAwareOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.HdrHistogram.Histogram;

/**
 * The seed's scenario (Instaclustr's gocql speculative-execution post) on a simulated 3-node
 * cluster: one node answers 250 ms late, the client runs idempotent INSERTs one after another with
 * random keys, and we report the total time and the executions each node received, for: a healthy
 * cluster, no hedging, the driver's constant policy (10 ms, 3 executions) at a 1 ms and at the
 * default 100 ms timer tick, hedge's wrapped session, and hedge's policy mode without and with
 * latency-aware ordering. Every hedge setting is at its default (p96 delay, 5% budget).
 *
 * <p>Usage: {@code SeedScenario [inserts=1000] [slowMs=250]}. Prints Markdown tables: per mode, the
 * time and the executions each node received; and for hedge's wrapped session, per run, what its
 * executor did (hedges sent, won and denied, its delay at the end) beside the inserts' own latency
 * percentiles, so that a run that hedged more than usual shows whether its inserts were slower.
 */
public final class SeedScenario {
    private SeedScenario() {}

    private record Mode(
            String name,
            boolean slow,
            UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> config,
            Function<CqlSession, CqlSession> wrap) {}

    /** One run: its total time and its inserts' latency as the caller saw it, in microseconds. */
    private record Run(double totalMs, Histogram latency) {}

    /**
     * @param args inserts, slow node's extra delay in ms
     * @throws Exception if the cluster cannot start
     */
    public static void main(String[] args) throws Exception {
        int inserts = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        long slowMs = args.length > 1 ? Long.parseLong(args[1]) : 250;
        UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> none = b -> b;
        UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> constant1ms =
                b -> constant(b).withDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(1));
        UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> policy = b -> b.withClass(
                        DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, HedgeLoadBalancingPolicy.class)
                .withClass(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, HedgeSpeculativeExecutionPolicy.class)
                .withDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(1));
        List<Mode> modes = List.of(
                new Mode("healthy cluster, no hedging", false, none, s -> s),
                new Mode("no hedging", true, none, s -> s),
                new Mode("driver constant policy (10 ms, 3 executions), 1 ms tick", true, constant1ms, s -> s),
                new Mode(
                        "driver constant policy (10 ms, 3 executions), default 100 ms tick",
                        true,
                        SeedScenario::constant,
                        s -> s),
                new Mode("hedge wrapped session (defaults)", true, none, HedgedCqlSession::wrap),
                new Mode("hedge wrapped session, losers dropped", true, none, s -> HedgedCqlSession.builder(s)
                        .losers(HedgedCqlSession.Losers.DROP)
                        .build()),
                new Mode(
                        "hedge wrapped session, no latency-aware ordering", true, none, s -> HedgedCqlSession.builder(s)
                                .latencyAware(LatencyAwareOptions.disabled())
                                .build()),
                new Mode("hedge policy mode, no ordering (defaults, 1 ms tick)", true, policy, s -> s),
                new Mode(
                        "hedge policy mode + latency-aware ordering",
                        true,
                        b -> policy.apply(b).withBoolean(HedgeDriverOption.LBP_LATENCY_AWARE, true),
                        s -> s));

        List<String> rows = new ArrayList<>();
        List<String> executorRows = new ArrayList<>();
        try (SimulatedCluster cluster = new SimulatedCluster(3)) {
            // unreported healthy runs first, through the driver, a wrapped session and the policy
            // mode, so that no mode pays for the JIT warming up (cold = a new session, not a new JVM)
            cluster.delays(SimulatedCluster.INSERT, 0, 0, 0);
            try (CqlSession warmUp = cluster.session(none)) {
                run(warmUp, inserts, new Random(7));
                run(HedgedCqlSession.wrap(warmUp), inserts, new Random(7));
            }
            try (CqlSession warmUp = cluster.session(policy)) {
                run(warmUp, inserts, new Random(7));
            }
            double healthyMs = Double.NaN;
            double healthyWarmMs = Double.NaN;
            for (Mode mode : modes) {
                cluster.delays(SimulatedCluster.INSERT, mode.slow ? slowMs : 0, 0, 0);
                try (CqlSession driver = cluster.session(mode.config)) {
                    CqlSession session = mode.wrap.apply(driver);
                    Random random = new Random(42);
                    // cold: a new session, nothing learned yet
                    cluster.clearLogs();
                    HedgeStats before = stats(session);
                    Run coldRun = run(session, inserts, random);
                    double coldMs = coldRun.totalMs();
                    long[] cold = cluster.received(SimulatedCluster.INSERT);
                    HedgeStats afterCold = stats(session);
                    executorRow(executorRows, mode.name, "cold", session, before, afterCold, coldRun);
                    if (!mode.slow) {
                        healthyMs = coldMs;
                    }
                    // warm: the same session, another run of the same size
                    cluster.clearLogs();
                    Run warmRun = mode.name.equals("no hedging") ? null : run(session, inserts, random);
                    double warmMs = warmRun == null ? Double.NaN : warmRun.totalMs();
                    long[] warm = cluster.received(SimulatedCluster.INSERT);
                    if (warmRun != null) {
                        executorRow(executorRows, mode.name, "warm", session, afterCold, stats(session), warmRun);
                    }
                    if (!mode.slow) {
                        healthyWarmMs = warmMs;
                    }
                    rows.add(String.format(
                            "| %s | %.0f | %.2fx | %s | %.3f | %s | %s | %s | %s |",
                            mode.name,
                            coldMs,
                            coldMs / healthyMs,
                            nodes(cold),
                            extra(cold, inserts),
                            Double.isNaN(warmMs) ? "same as cold" : String.format("%.0f", warmMs),
                            Double.isNaN(warmMs) ? "" : String.format("%.2fx", warmMs / healthyWarmMs),
                            Double.isNaN(warmMs) ? "" : nodes(warm),
                            Double.isNaN(warmMs) ? "" : String.format("%.3f", extra(warm, inserts))));
                    System.err.println(rows.get(rows.size() - 1));
                }
            }
        }
        // losers dropped or left to finish: a warm session whose node 1 turns slow
        List<String> turns = new ArrayList<>();
        try (SimulatedCluster cluster = new SimulatedCluster(3)) {
            for (HedgedCqlSession.Losers losers : HedgedCqlSession.Losers.values()) {
                cluster.delays(SimulatedCluster.INSERT, 0, 0, 0);
                try (CqlSession driver = cluster.session(none)) {
                    CqlSession session =
                            HedgedCqlSession.builder(driver).losers(losers).build();
                    Random random = new Random(42);
                    run(session, inserts, random); // healthy: hedge learns its delay
                    cluster.delays(SimulatedCluster.INSERT, slowMs, 0, 0);
                    cluster.clearLogs();
                    HedgeStats before = stats(session);
                    Run turned = run(session, inserts, random);
                    double ms = turned.totalMs();
                    long[] received = cluster.received(SimulatedCluster.INSERT);
                    executorRow(
                            executorRows,
                            "wrapped session, losers " + losers,
                            "after the turn",
                            session,
                            before,
                            stats(session),
                            turned);
                    turns.add(String.format(
                            "| %s | %.0f | %s | %.3f |", losers, ms, nodes(received), extra(received, inserts)));
                    System.err.println(turns.get(turns.size() - 1));
                }
            }
        }
        System.out.printf(
                "%d sequential idempotent INSERTs per run, node 1 answers %d ms late; cold = new session, warm ="
                        + " the next %d on the same session%n%n",
                inserts, slowMs, inserts);
        System.out.println("| mode | cold: total ms | vs healthy | executions (slow / 2 / 3) | extra per request"
                + " | warm: total ms | vs healthy | executions (slow / 2 / 3) | extra per request |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        rows.forEach(System.out::println);
        System.out.printf(
                "%nWrapped session, %d healthy INSERTs, then node 1 turns %d ms slow: the next %d%n%n",
                inserts, slowMs, inserts);
        System.out.println("| losers | total ms | executions (slow / 2 / 3) | extra per request |");
        System.out.println("|---|---|---|---|");
        turns.forEach(System.out::println);
        System.out.printf(
                "%nhedge wrapped sessions, per run: what the executor did, and the inserts' latency as the caller"
                        + " saw it (µs)%n%n");
        System.out.println(
                "| mode | run | hedges sent | won | denied | delay at the end | latency p50 | p96 | p99 |" + " max |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|");
        executorRows.forEach(System.out::println);
    }

    private static Run run(CqlSession session, int inserts, Random random) {
        Histogram latency = new Histogram(3_600_000_000L, 3); // µs, up to an hour, as SideBySide's
        long start = System.nanoTime();
        for (int i = 0; i < inserts; i++) {
            long t = System.nanoTime();
            session.execute(SimulatedCluster.insert(random.nextInt(), random.nextInt(10000)));
            latency.recordValue((System.nanoTime() - t) / 1000);
        }
        return new Run((System.nanoTime() - start) / 1e6, latency);
    }

    /** The wrapped session's executor statistics, or null for a plain driver session. */
    private static HedgeStats stats(CqlSession session) {
        return session instanceof HedgedCqlSession hedged ? hedged.executor().stats() : null;
    }

    private static void executorRow(
            List<String> rows, String mode, String phase, CqlSession session, HedgeStats from, HedgeStats to, Run run) {
        if (from == null || to == null) {
            return;
        }
        Histogram latency = run.latency();
        long delay = ((HedgedCqlSession) session).executor().currentDelayNanos();
        rows.add(String.format(
                "| %s | %s | %d | %d | %d | %s | %d | %d | %d | %d |",
                mode,
                phase,
                to.hedgesSent() - from.hedgesSent(),
                to.hedgesWon() - from.hedgesWon(),
                to.budgetDenied() - from.budgetDenied(),
                delay == DelayPolicy.NO_HEDGE ? "none" : String.format("%.0f", delay / 1e3),
                latency.getValueAtPercentile(50),
                latency.getValueAtPercentile(96),
                latency.getValueAtPercentile(99),
                latency.getMaxValue()));
        System.err.println(rows.get(rows.size() - 1));
    }

    private static String nodes(long[] received) {
        return received[0] + " / " + received[1] + " / " + received[2];
    }

    private static double extra(long[] received, int inserts) {
        return (double) (Arrays.stream(received).sum() - inserts) / inserts;
    }

    private static ProgrammaticDriverConfigLoaderBuilder constant(ProgrammaticDriverConfigLoaderBuilder b) {
        return b.withString(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, "ConstantSpeculativeExecutionPolicy")
                .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 3)
                .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, Duration.ofMillis(10));
    }
}

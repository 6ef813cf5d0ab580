package io.github.hedge.cassandra.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The tables of docs/reliability.md, computed from raw output ({@link Raw}) only: the suite writes
 * them next to its raw files, and {@link ReliabilityDoc} puts the same text into the doc. Static.
 */
final class Tables {
    private Tables() {}

    static final long S = 1_000_000_000L;

    /**
     * The tables of a fault ({@code node-death}, {@code stall}, {@code slow-link}) with a one-line
     * header: latency and throughput; one line for nothing lost and exactly once (failed
     * non-idempotent statements are counted there); and the stall's bound or the slow link's figures.
     */
    static String fault(Path dir, String fault) {
        Raw.Loaded l = Raw.load(dir, fault);
        Raw.Fault info = l.fault();
        boolean death = fault.equals("node-death");
        List<String> load = new ArrayList<>();
        load.add("| mode | failed (idempotent) | steady req/s | lowest req/s after | steady p99 ms | p99 ms,"
                + " fault +0-5 s | max ms after | extra executions |" + (death ? " marked down after |" : ""));
        load.add("|---|---|---|---|---|---|---|---|" + (death ? "---|" : ""));
        long[] once = new long[10];
        for (Raw.Run run : l.runs().values()) {
            LoadRun r = run.run();
            Workload.Check c = run.check();
            long at = r.events.containsKey("fault") ? r.at("fault") : info.faultS() * S;
            int[] t = r.throughputPerSecond();
            int lowest = Arrays.stream(Arrays.copyOfRange(t, (int) (at / S), t.length))
                    .min()
                    .orElse(0);
            load.add("| " + r.mode.label
                    + " | " + r.failures(s -> s.kind().idempotent())
                    + " | " + f(r.steadyRate(info.warmupS(), info.faultS()))
                    + " | " + lowest
                    + " | "
                    + f(LoadRun.percentileMs(
                            r.window(info.warmupS() * S, at, s -> s.kind().idempotent()), 0.99))
                    + " | "
                    + f(LoadRun.percentileMs(
                            r.window(at, at + 5 * S, s -> s.kind().idempotent()), 0.99))
                    + " | "
                    + f(LoadRun.maxMs(r.window(at, Long.MAX_VALUE, s -> s.kind().idempotent())))
                    + " | " + String.format(Locale.ROOT, "%.1f%%", 100 * r.extraLoad())
                    + (death
                            ? " | "
                                    + (r.markedDownAt < 0
                                            ? "-"
                                            : String.format(Locale.ROOT, "%.2f s", (r.markedDownAt - at) / 1e9))
                            : "")
                    + " |");
            if (c != null) {
                once[0] += c.acked() - c.missingInserts().size();
                once[1] += c.acked();
                long[] e = exactlyOnceCounts(c);
                for (int i = 0; i < e.length; i++) {
                    once[2 + i] += e[i];
                }
            }
        }
        String header = info.title() + ". Constant policy delay: " + info.constantDelayMs()
                + " ms (the unhedged run's p95 before the fault). Rate " + LoadRun.RATE + " req/s from "
                + LoadRun.THREADS + " threads.";
        String summary = String.format(
                Locale.ROOT,
                "Nothing lost, exactly once, all modes together: %d of %d acknowledged inserts read back;"
                        + " %d of %d answered non-idempotent statements executed once, on one node; failed ones"
                        + " executed once %d, never %d; executed twice or more: %d; counter rows reading 1 / 0 /"
                        + " 2 or more: %d / %d / %d.",
                once[0],
                once[1],
                once[2],
                once[3],
                once[4],
                once[5],
                once[6],
                once[7],
                once[8],
                once[9]);
        String out = header + "\n\n" + String.join("\n", load) + "\n\n" + summary + "\n";
        if (fault.equals("stall")) {
            out += "\n" + stallBound(l);
        } else if (fault.equals("slow-link")) {
            out += "\n" + slowLink(l);
        }
        return out;
    }

    private static String stallBound(Raw.Loaded l) {
        List<String> rows = new ArrayList<>();
        rows.add("| mode | slowest ms in flight during the stall | control ms (slowest of the fault-free 2 s windows)"
                + " | largest hedge delay ms | coordinators' retry ms | 0.25 x unhedged max ms | bound ms | met |");
        rows.add("|---|---|---|---|---|---|---|---|");
        LoadRun none = l.runs().containsKey(Mode.NONE) ? l.runs().get(Mode.NONE).run() : null;
        for (Raw.Run run : l.runs().values()) {
            LoadRun r = run.run();
            StallIT.Bound b = StallIT.bound(r, none);
            rows.add("| " + r.mode.label
                    + " | " + f(b.max())
                    + " | " + f(b.control())
                    + " | " + (!b.applies() ? "-" : b.delayMs() < 0 ? "none" : f(b.delayMs()))
                    + " | " + (!b.applies() ? "-" : f(b.retryMs()))
                    + " | " + (b.applies() && !Double.isNaN(b.noHedgingMax()) ? f(0.25 * b.noHedgingMax()) : "-")
                    + " | " + (b.applies() ? f(b.limit()) : "-")
                    + " | " + (!b.applies() ? "-" : b.met() ? "yes" : "**no**")
                    + " |");
        }
        return String.join("\n", rows) + "\n";
    }

    private static String slowLink(Raw.Loaded l) {
        List<String> rows = new ArrayList<>();
        rows.add("| mode | requests of 100 ms or more: healthy phase / from fault + 5 s | p99 ms, healthy phase"
                + " | p99 ms from fault + 5 s | within 1.3x the healthy p99 |");
        rows.add("|---|---|---|---|---|");
        for (Raw.Run run : l.runs().values()) {
            LoadRun r = run.run();
            double healthy = SlowLinkIT.healthyP99(r);
            double slow = SlowLinkIT.slowP99(r);
            rows.add("| " + r.mode.label
                    + " | "
                    + String.format(
                            Locale.ROOT,
                            "%.2f%% / %.2f%%",
                            100 * SlowLinkIT.healthyShare(r),
                            100 * SlowLinkIT.slowShare(r))
                    + " | " + f(healthy)
                    + " | " + f(slow)
                    + " | " + (slow <= 1.3 * healthy ? "yes" : "no")
                    + " |");
        }
        return String.join("\n", rows) + "\n";
    }

    /**
     * The exactly-once counts: answered and executed once on one node, answered, failed executed
     * once, failed never executed, executed twice or more, counter rows reading 1, 0, 2 or more.
     */
    static long[] exactlyOnceCounts(Workload.Check c) {
        List<Workload.Statement> st = c.statements();
        long answered = st.stream()
                .filter(s -> s.told() == Workload.Told.ACKED || s.told() == Workload.Told.NOT_APPLIED)
                .count();
        long answeredOnce = st.stream()
                .filter(s -> (s.told() == Workload.Told.ACKED || s.told() == Workload.Told.NOT_APPLIED)
                        && s.executed() == 1
                        && s.nodes() == 1)
                .count();
        long failedOnce = st.stream()
                .filter(s -> s.told() == Workload.Told.FAILED && s.executed() == 1)
                .count();
        long failedNever = st.stream()
                .filter(s -> s.told() == Workload.Told.FAILED && s.executed() == 0)
                .count();
        long twice = st.stream().filter(s -> s.executed() >= 2).count();
        long row1 = counterRows(st, 1, 1);
        long row0 = counterRows(st, 0, 0);
        long row2 = counterRows(st, 2, Long.MAX_VALUE);
        return new long[] {answeredOnce, answered, failedOnce, failedNever, twice, row1, row0, row2};
    }

    private static long counterRows(List<Workload.Statement> st, long from, long to) {
        return st.stream()
                .filter(s -> s.kind() == Workload.Kind.COUNTER && s.row() >= from && s.row() <= to)
                .count();
    }

    /** The server-cost table ({@code server-cost}: per-node counters next to each mode's run). */
    static String serverCost(Path dir) {
        Raw.Loaded l = Raw.load(dir, "server-cost");
        List<String> rows = new ArrayList<>();
        rows.add(
                "| mode | client requests | extra executions | CQL requests received, node 1 / 2 / 3 | per client request"
                        + " | node CPU s 1 / 2 / 3 (total) | p99 ms |");
        rows.add("|---|---|---|---|---|---|---|");
        for (Raw.Run run : l.runs().values()) {
            LoadRun r = run.run();
            Properties p = properties(dir.resolve(Raw.file("server-cost", r.mode, "-nodes.properties")));
            long client = r.window(r.at("measure"), Long.MAX_VALUE, x -> true).size();
            long cql = 0;
            double cpu = 0;
            for (int n = 1; n <= 3; n++) {
                cql += Long.parseLong(p.getProperty("node" + n + ".native_transport_requests"));
                cpu += Long.parseLong(p.getProperty("node" + n + ".cpu_ms")) / 1000.0;
            }
            rows.add("| " + r.mode.label + " | " + client + " | "
                    + String.format(Locale.ROOT, "%.1f%%", 100 * r.extraLoad()) + " | "
                    + perNode(p, "native_transport_requests") + " | "
                    + String.format(Locale.ROOT, "%.3f", (double) cql / client) + " | "
                    + perNode(p, "cpu_ms", 1000.0) + " (" + f(cpu) + ") | "
                    + f(LoadRun.percentileMs(
                            r.window(l.fault().warmupS() * S, Long.MAX_VALUE, x -> x.kind()
                                    .idempotent()),
                            0.99))
                    + " |");
        }
        String header =
                l.fault().title() + ". Constant policy delay " + l.fault().constantDelayMs() + " ms.";
        return header + "\n\n" + String.join("\n", rows) + "\n";
    }

    private static String perNode(Properties p, String name) {
        List<String> out = new ArrayList<>();
        for (int n = 1; n <= 3; n++) {
            out.add(p.getProperty("node" + n + "." + name));
        }
        return String.join(" / ", out);
    }

    private static String perNode(Properties p, String name, double divide) {
        List<String> out = new ArrayList<>();
        for (int n = 1; n <= 3; n++) {
            out.add(f(Long.parseLong(p.getProperty("node" + n + "." + name)) / divide));
        }
        return String.join(" / ", out);
    }

    /** The hygiene table ({@code hygiene.properties}). */
    static String hygiene(Path dir) {
        Properties p = properties(dir.resolve("hygiene.properties"));
        List<String> rows = new ArrayList<>();
        rows.add("| requests | seconds | failed | hedges sent | hedges won | budget denied | threads after 10% / at the"
                + " end | pending attempts | pending timers | in-flight calls | driver in-flight | driver orphaned"
                + " streams |");
        rows.add("|---|---|---|---|---|---|---|---|---|---|---|---|");
        rows.add("| "
                + String.join(
                        " | ",
                        List.of(
                                p.getProperty("requests"),
                                p.getProperty("seconds"),
                                p.getProperty("failed"),
                                p.getProperty("hedges_sent"),
                                p.getProperty("hedges_won"),
                                p.getProperty("budget_denied"),
                                p.getProperty("threads_warm") + " / " + p.getProperty("threads_end"),
                                p.getProperty("pending_attempts"),
                                p.getProperty("pending_timers"),
                                p.getProperty("in_flight_calls"),
                                p.getProperty("driver_in_flight"),
                                p.getProperty("driver_orphaned")))
                + " |");
        return String.join("\n", rows) + "\n";
    }

    /** When a section's run ran, from its raw files. */
    static String ranAt(Path dir, String section) {
        String file = section.equals("hygiene") ? "hygiene.properties" : section + ".properties";
        return properties(dir.resolve(file)).getProperty("ran_at");
    }

    static Properties properties(Path file) {
        try {
            return Raw.readProperties(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String f(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static Map<String, String> sections(Path dir) {
        return Map.of(
                "node-death", fault(dir, "node-death"),
                "stall", fault(dir, "stall"),
                "slow-link", fault(dir, "slow-link"),
                "server-cost", serverCost(dir),
                "hygiene", hygiene(dir));
    }
}

package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.PercentileDelay;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The command line of {@code hedge-sim.jar}. Results go to stdout (one JSON object with
 * {@code --json}, which {@code shift}, {@code load} and {@code timers} always print; {@code
 * transient} prints a table and writes its JSON lines to the file {@code --json FILE} names),
 * progress and errors to stderr. Exit codes: 0 done, 1 failed, 2 bad command line (bad SPEC included).
 *
 * <pre>
 * java -jar hedge-sim.jar tail --dist lognormal:0,1 --budget 0.05 --requests 200000 --seed 1 --json
 * java -jar hedge-sim.jar tail --dist pareto:2,1 --plot docs/img/tail-percentiles.png
 * java -jar hedge-sim.jar plot --dist lognormal:0,1 --out docs/img/tail-percentiles.png
 * java -jar hedge-sim.jar shift --dist lognormal:0,1 --budget 0.05 --seed 1
 * java -jar hedge-sim.jar closed-shift --seed 1
 * java -jar hedge-sim.jar load --dist lognormal:0,1 --budget 0.05 --requests 200000 --seed 1
 * java -jar hedge-sim.jar timers
 * java -jar hedge-sim.jar sweep --seed 1 > hedge-benchmarks/results/sweep.jsonl
 * java -jar hedge-sim.jar transient --seeds 200 --json hedge-benchmarks/results/transient.jsonl
 * </pre>
 */
public final class HedgeSim {
    static final String USAGE = String.join(
            System.lineSeparator(),
            "usage: java -jar hedge-sim.jar COMMAND [options]",
            "  tail   --dist SPEC --budget B --requests N --seed S [--rate R] [--loser-sampling SHARE] [--scope SCOPE] [--json]"
                    + " [--plot FILE.png]",
            "  plot   --dist SPEC --budget B --requests N --seed S [--rate R] --out FILE.png",
            "  shift  --dist SPEC --budget B --seed S [--rate R] [--healthy SEC] [--slow SEC] [--after SEC]"
                    + " [--factor F] [--sample SEC] [--slow-replicas K] [--window-samples N]",
            "  closed-shift --dist SPEC --budget B --seed S [--cap MS] [--percentile P] [--lanes L] [--healthy SEC]"
                    + " [--slow SEC] [--factor F]",
            "  load   --dist SPEC --budget B --requests N --seed S [--servers K] [--utilizations 0.5,0.7,0.9]"
                    + " [--loser-sampling SHARE]",
            "  timers [--samples N] [--calls N]",
            "  sweep  [--dists SPEC;SPEC...] [--budgets 0.001,0.01,0.05,0.1] [--requests N] [--large-requests N]"
                    + " [--seed S] [--rate R] [--loser-sampling SHARE] [--scope SCOPE]",
            "  transient [--dists SPEC;SPEC...|none] [--stall SHARE,MIN_MS,MAX_MS|none] [--stall-base SPEC]"
                    + " [--calls 200,1000,10000] [--rates 1,10,100,1000] [--budget B] [--seeds K] [--seed S]"
                    + " [--json FILE]",
            "         cold start: the first N calls of a fresh executor per seed, maxExtraLoad(B) against the"
                    + " hindsight fixed delay with the same extra load; --dists defaults to sweep's grid, the"
                    + " stalling third replica (default 0.1,40,250 on " + TransientSim.DEFAULT_STALL_BASE
                    + ") runs first",
            "SPEC: " + Distribution.FORMS);

    private static final String DEFAULT_DIST = "lognormal:0,1";

    private HedgeSim() {}

    /**
     * @param args the command line
     */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        int code = run(args, System.out, System.err);
        System.exit(code);
    }

    /**
     * Runs a command without exiting the JVM.
     *
     * @param args the command line
     * @param out where results go
     * @param err where errors go
     * @return the exit code
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        System.setProperty("java.awt.headless", "true");
        if (args.length == 0 || "help".equals(args[0]) || "--help".equals(args[0]) || "-h".equals(args[0])) {
            (args.length == 0 ? err : out).println(USAGE);
            return args.length == 0 ? 2 : 0;
        }
        String cmd = args[0];
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        try {
            switch (cmd) {
                case "tail":
                    return tail(rest, out, false);
                case "plot":
                    return tail(rest, out, true);
                case "shift":
                    return shift(rest, out);
                case "closed-shift":
                    return closedShift(rest, out);
                case "load":
                    return load(rest, out);
                case "timers":
                    return timers(rest, out);
                case "sweep":
                    return sweep(rest, out);
                case "transient":
                    return transientCommand(rest, out);
                default:
                    throw new UsageException("unknown command '" + cmd
                            + "' (tail, plot, shift, closed-shift, load, timers, sweep, transient)");
            }
        } catch (UsageException e) {
            err.println("hedge-sim: " + e.getMessage());
            return 2;
        } catch (Exception e) {
            err.println("hedge-sim: " + cmd + " failed: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    private static final Set<String> TAIL_OPTIONS =
            Set.of("dist", "budget", "requests", "seed", "rate", "plot", "out", "loser-sampling", "scope");

    private static int tail(List<String> rest, PrintStream out, boolean plotCommand) throws Exception {
        CliArgs a = CliArgs.parse(rest, TAIL_OPTIONS, Set.of("json"));
        Distribution dist = a.dist(DEFAULT_DIST);
        double budget = a.number("budget", 0.05, 1e-6, 0.999);
        int requests = (int) a.integer("requests", 200_000, 1, 2_000_000);
        long seed = a.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE);
        double rate = a.number("rate", 1000, 1e-3, 1e9);
        String plot = a.string(plotCommand ? "out" : "plot", null);
        if (plotCommand && plot == null) {
            throw new UsageException("plot needs --out FILE.png");
        }
        TailSim.Config c =
                new TailSim.Config(dist, budget, requests, seed, rate, a.number("loser-sampling", 0, 0, 1), scope(a));
        log(String.format(
                "tail %s budget %s: %d requests at %.0f/s, seed %d", dist.spec(), budget, requests, rate, seed));
        long t0 = System.nanoTime();
        TailSim.Result r = TailSim.run(c);
        log(String.format("tail done in %.1f s", (System.nanoTime() - t0) / 1e9));
        if (plot != null) {
            PercentilePlot.render(
                    r.variants,
                    String.format(
                            "%s, budget %s, %d requests, seed %d (virtual time)", dist.spec(), budget, requests, seed),
                    Path.of(plot));
            log("wrote " + plot);
        }
        if (a.flag("json") || plotCommand) {
            out.println(TailSim.json(r, c));
        } else {
            out.print(TailSim.table(r, c));
        }
        return 0;
    }

    private static int shift(List<String> rest, PrintStream out) {
        CliArgs a = CliArgs.parse(
                rest,
                Set.of(
                        "dist",
                        "budget",
                        "seed",
                        "rate",
                        "healthy",
                        "slow",
                        "after",
                        "factor",
                        "sample",
                        "slow-replicas",
                        "window-samples"),
                Set.of("json"));
        ShiftSim.Config c = new ShiftSim.Config(
                a.dist(DEFAULT_DIST),
                a.number("budget", 0.05, 1e-6, 0.999),
                a.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE),
                a.number("rate", 1000, 1, 1e7),
                a.number("healthy", 30, 0, 1e5),
                a.number("slow", 60, 0, 1e5),
                a.number("after", 60, 0, 1e5),
                a.number("factor", 10, 1, 1e6),
                a.number("sample", 5, 0.001, 1e5),
                (int) a.integer("slow-replicas", 1, 1, Workload.REPLICAS),
                a.integer("window-samples", 0, 0, 10_000_000));
        log("shift: " + c.slowReplicas + " of " + Workload.REPLICAS + " replicas slowed down " + c.factor + "x from "
                + c.healthySeconds + " s for " + c.slowSeconds + " s");
        out.println(ShiftSim.run(c));
        return 0;
    }

    private static int closedShift(List<String> rest, PrintStream out) {
        CliArgs a = CliArgs.parse(
                rest,
                Set.of("dist", "cap", "budget", "percentile", "seed", "lanes", "healthy", "slow", "factor"),
                Set.of("json"));
        ClosedShiftSim.Config c = new ClosedShiftSim.Config(
                a.dist("pareto:1.2,1"),
                a.number("cap", 400, 0, 1e7),
                a.number("budget", 0.05, 1e-6, 0.999),
                a.number("percentile", 0.96, 0, 0.999999),
                a.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE),
                (int) a.integer("lanes", 8, 1, 10_000),
                a.number("healthy", 33, 1, 1e5),
                a.number("slow", 30, 5, 1e5),
                a.number("factor", 5, 1, 1e6));
        log("closed-shift: " + c.lanes + " lanes, every replica " + c.factor + "x slower from " + c.healthySeconds
                + " s");
        out.println(ClosedShiftSim.run(c));
        return 0;
    }

    private static int load(List<String> rest, PrintStream out) {
        CliArgs a = CliArgs.parse(
                rest,
                Set.of("dist", "budget", "requests", "seed", "servers", "utilizations", "loser-sampling"),
                Set.of("json"));
        String[] us = a.string("utilizations", "0.5,0.7,0.9").split(",");
        double[] rho = new double[us.length];
        for (int i = 0; i < us.length; i++) {
            try {
                rho[i] = Double.parseDouble(us[i].trim());
            } catch (NumberFormatException e) {
                throw new UsageException("--utilizations must be numbers in (0, 1), was '" + us[i] + "'");
            }
            if (!(rho[i] > 0 && rho[i] < 1)) {
                throw new UsageException("--utilizations must be in (0, 1), was " + us[i]);
            }
        }
        LoadSim.Config c = new LoadSim.Config(
                a.dist(DEFAULT_DIST),
                a.number("budget", 0.05, 1e-6, 0.999),
                (int) a.integer("requests", 200_000, 1, 50_000_000),
                a.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE),
                (int) a.integer("servers", 1, 1, 1024),
                rho,
                a.number("loser-sampling", 0, 0, 1));
        out.println(LoadSim.run(c));
        return 0;
    }

    private static int sweep(List<String> rest, PrintStream out) {
        CliArgs a = CliArgs.parse(
                rest,
                Set.of("dists", "budgets", "requests", "large-requests", "seed", "rate", "loser-sampling", "scope"),
                Set.of("json"));
        List<Distribution> dists = a.dists("dists", SweepSim.DEFAULT_DISTS);
        double[] budgets = SweepSim.DEFAULT_BUDGETS;
        String bs = a.string("budgets", null);
        if (bs != null) {
            String[] parts = bs.split(",");
            budgets = new double[parts.length];
            for (int i = 0; i < parts.length; i++) {
                try {
                    budgets[i] = Double.parseDouble(parts[i].trim());
                } catch (NumberFormatException e) {
                    budgets[i] = Double.NaN;
                }
                if (!(budgets[i] > 0 && budgets[i] < 1)) {
                    throw new UsageException("--budgets must be numbers in (0, 1), was '" + parts[i] + "'");
                }
            }
        }
        int small = (int) a.integer("requests", 500_000, 1, 2_000_000);
        int large = (int) a.integer("large-requests", 1_000_000, 1, 2_000_000);
        SweepSim.Config c = new SweepSim.Config(
                dists,
                budgets,
                small,
                large,
                a.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE),
                a.number("rate", 1000, 1e-3, 1e9),
                a.number("loser-sampling", 0, 0, 1),
                scope(a));
        log("sweep: " + dists.size() + " distributions x " + budgets.length + " budgets");
        SweepSim.run(c, out);
        return 0;
    }

    private static int transientCommand(List<String> rest, PrintStream out) throws java.io.IOException {
        CliArgs a = CliArgs.parse(
                rest,
                Set.of("dists", "stall", "stall-base", "calls", "rates", "budget", "seeds", "seed", "json"),
                Set.of());
        List<TransientSim.Service> services = new java.util.ArrayList<>();
        String stall = a.string("stall", null);
        if (!"none".equals(stall)) {
            double[] st = a.numbers("stall", TransientSim.DEFAULT_STALL, 0, 1e6);
            if (st.length != 3 || !(st[0] > 0 && st[0] <= 1) || st[2] < st[1]) {
                throw new UsageException(
                        "--stall must be SHARE,MIN_MS,MAX_MS with SHARE in (0, 1] and MIN_MS <= MAX_MS,"
                                + " or none, was '" + stall + "'");
            }
            Distribution base;
            try {
                base = Distribution.parse(a.string("stall-base", TransientSim.DEFAULT_STALL_BASE));
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
            services.add(TransientSim.Service.stalling(base, st[0], st[1], st[2]));
        }
        if (!"none".equals(a.string("dists", null))) {
            for (Distribution d : a.dists("dists", SweepSim.DEFAULT_DISTS)) {
                services.add(TransientSim.Service.of(d));
            }
        }
        if (services.isEmpty()) {
            throw new UsageException("transient has nothing to run: --dists none and --stall none");
        }
        TransientSim.Config c = new TransientSim.Config(
                services,
                a.integers("calls", TransientSim.DEFAULT_CALLS, 1, 1_000_000),
                a.numbers("rates", TransientSim.DEFAULT_RATES, 1e-3, 1e7),
                a.number("budget", 0.05, 1e-6, 0.999),
                (int) a.integer("seeds", 200, 1, 100_000),
                a.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE));
        String json = a.string("json", null);
        log("transient: " + services.size() + " services x " + c.rates.length + " rates x " + c.calls.length
                + " call counts, " + c.seeds + " seeds per cell");
        if (json == null) {
            TransientSim.run(c, out, null);
            return 0;
        }
        try (PrintStream j = new PrintStream(
                java.nio.file.Files.newOutputStream(Path.of(json)), true, java.nio.charset.StandardCharsets.UTF_8)) {
            TransientSim.run(c, out, j);
        }
        log("wrote " + json);
        return 0;
    }

    private static int timers(List<String> rest, PrintStream out) throws InterruptedException {
        CliArgs a = CliArgs.parse(rest, Set.of("samples", "calls"), Set.of("json"));
        int samples = (int) a.integer("samples", 2000, 1, 1_000_000);
        long calls = a.integer("calls", 10_000_000, 0, Long.MAX_VALUE);
        log("timers: " + samples + " lateness samples at 5 ms, then " + calls + " schedule-then-cancel calls");
        out.println(TimerCheck.run(samples, calls));
        return 0;
    }

    /** {@code --scope}: a {@code PercentileDelay.Scope} name, or null for the library's default. */
    private static PercentileDelay.Scope scope(CliArgs a) {
        String s = a.string("scope", null);
        if (s == null) {
            return null;
        }
        try {
            return PercentileDelay.Scope.valueOf(s);
        } catch (IllegalArgumentException e) {
            throw new UsageException(
                    "--scope must be one of " + Arrays.toString(PercentileDelay.Scope.values()) + ", was '" + s + "'");
        }
    }

    static void log(String message) {
        System.err.println("hedge-sim: " + message);
    }
}

package io.github.hedge.examples.demo;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.grpc.HedgeLoadBalancerProvider;
import io.github.hedge.grpc.HedgingClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The one-command demo. By default it starts three gRPC replicas on 127.0.0.1 ({@link DemoBackends}:
 * heavy-tailed latency, replica 3 stalls now and then) and drives the same open-loop load through
 * three channels in turn: plain {@code round_robin}, hedge-grpc ({@link HedgingClientInterceptor}
 * with the {@code hedge_round_robin} balancer, p96 delay, 5% budget) and grpc-java's native {@code hedgingPolicy}
 * with a fixed delay set to the delay hedge-grpc had reached. It prints a side-by-side table and writes an HTML
 * report. {@code --grpc host:port,...} drives real servers instead, {@code --cassandra host:port,...} a
 * Cassandra cluster ({@link CassandraDemo}). Run with {@code --help}.
 */
public final class HedgeDemo {
    /** Held so the level sticks: java.util.logging keeps loggers weakly. */
    private static final List<java.util.logging.Logger> QUIET =
            List.of(java.util.logging.Logger.getLogger("io.grpc"), java.util.logging.Logger.getLogger("io.netty"));

    /** hedge-grpc's default percentile ({@code HedgingClientInterceptor.DEFAULT_CONFIG}'s delay). */
    static final double DEFAULT_HEDGE_PERCENTILE = 0.96;

    private HedgeDemo() {}

    /** The demo's settings, parsed from the command line. */
    static final class Options {
        double seconds = 20;
        double rate = 200;
        double warmupSeconds = 1;
        double jvmWarmupSeconds = 3;
        Path report = Path.of("target", "hedge-demo-report.html");
        List<InetSocketAddress> grpc = List.of();
        String method = "grpc.health.v1.Health/Check";
        List<String> modes = List.of("none", "hedge", "native");
        double hedgePercentile = DEFAULT_HEDGE_PERCENTILE;
        double budget = 0.05;
        int maxAttempts = 3;
        double medianMillis = 2;
        double stallPercent = 10;
        long seed = 42;
        long deadlineMillis = 2_000;
        Double nativeDelayMillis;
        List<InetSocketAddress> cassandra = List.of();
        String datacenter;
        String keyspace = CassandraDemo.DEFAULT_KEYSPACE;
        String table = CassandraDemo.DEFAULT_TABLE;
        int keys = 1000;
        String cql;
        String consistency = "LOCAL_ONE";
        boolean createSchema;
        boolean progress = true;
        boolean help;

        private static final java.util.Set<String> KNOWN = java.util.Set.of(
                "--seconds",
                "--rate",
                "--warmup",
                "--jvm-warmup",
                "--report",
                "--grpc",
                "--method",
                "--modes",
                "--hedge-percentile",
                "--budget",
                "--max-attempts",
                "--median-ms",
                "--stall-percent",
                "--seed",
                "--deadline-ms",
                "--native-delay-ms",
                "--cassandra",
                "--datacenter",
                "--keyspace",
                "--table",
                "--keys",
                "--cql",
                "--consistency");

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("--help") || a.equals("-h")) {
                    o.help = true;
                    continue;
                }
                if (a.equals("--no-progress")) {
                    o.progress = false;
                    continue;
                }
                if (a.equals("--create-schema")) {
                    o.createSchema = true;
                    continue;
                }
                String value;
                String name = a.indexOf('=') > 0 ? a.substring(0, a.indexOf('=')) : a;
                if (!KNOWN.contains(name)) {
                    throw new IllegalArgumentException("unknown option " + name + " (see --help)");
                }
                int eq = a.indexOf('=');
                if (eq > 0) {
                    value = a.substring(eq + 1);
                    a = a.substring(0, eq);
                } else if (i + 1 < args.length) {
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException(a + " needs a value (see --help)");
                }
                switch (a) {
                    case "--seconds" -> o.seconds = number(a, value, 0.5, 3600);
                    case "--rate" -> o.rate = number(a, value, 1, 20_000);
                    case "--warmup" -> o.warmupSeconds = number(a, value, 0, 60);
                    case "--jvm-warmup" -> o.jvmWarmupSeconds = number(a, value, 0, 60);
                    case "--report" -> o.report = Path.of(value);
                    case "--grpc" -> o.grpc = addresses("--grpc", value, -1);
                    case "--method" -> o.method = value;
                    case "--modes" -> o.modes = modes(value);
                    case "--hedge-percentile" -> o.hedgePercentile = number(a, value, 0.5, 0.9999);
                    case "--budget" -> o.budget = number(a, value, 0.0001, 1);
                    case "--max-attempts" -> o.maxAttempts = (int) number(a, value, 1, 5);
                    case "--median-ms" -> o.medianMillis = number(a, value, 0.01, 1000);
                    case "--stall-percent" -> o.stallPercent = number(a, value, 0, 100);
                    case "--seed" -> o.seed = (long) number(a, value, Long.MIN_VALUE, Long.MAX_VALUE);
                    case "--deadline-ms" -> o.deadlineMillis = (long) number(a, value, 1, 600_000);
                    case "--native-delay-ms" -> o.nativeDelayMillis = number(a, value, 0, 60_000);
                    case "--cassandra" -> o.cassandra = addresses("--cassandra", value, 9042);
                    case "--datacenter" -> o.datacenter = nonBlank(a, value);
                    case "--keyspace" -> o.keyspace = identifier(a, value);
                    case "--table" -> o.table = identifier(a, value);
                    case "--keys" -> o.keys = (int) number(a, value, 1, 10_000_000);
                    case "--cql" -> o.cql = CassandraDemo.readStatement(value);
                    case "--consistency" -> o.consistency = CassandraDemo.consistency(value);
                    default -> throw new IllegalArgumentException("unknown option " + a + " (see --help)");
                }
            }
            if (!o.grpc.isEmpty() && !o.cassandra.isEmpty()) {
                throw new IllegalArgumentException("--grpc and --cassandra drive different backends: pass one of them");
            }
            if (o.cassandra.isEmpty()) {
                for (String cassandraOnly : List.of(
                        "--datacenter",
                        "--keyspace",
                        "--table",
                        "--keys",
                        "--cql",
                        "--consistency",
                        "--create-schema")) {
                    for (String arg : args) {
                        if (arg.equals(cassandraOnly) || arg.startsWith(cassandraOnly + "=")) {
                            throw new IllegalArgumentException(cassandraOnly + " needs --cassandra host:port");
                        }
                    }
                }
            }
            if (o.cql != null && o.createSchema) {
                throw new IllegalArgumentException(
                        "--create-schema creates the demo's own table, which --cql does not read: pass one of them");
            }
            return o;
        }

        private static double number(String name, String value, double min, double max) {
            double v;
            try {
                v = Double.parseDouble(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        name + " must be a number in [" + num(min) + ", " + num(max) + "], was \"" + value + "\"");
            }
            if (!(v >= min && v <= max)) {
                throw new IllegalArgumentException(
                        name + " must be in [" + num(min) + ", " + num(max) + "], was " + value);
            }
            return v;
        }

        private static String num(double d) {
            return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
        }

        /**
         * @param defaultPort the port of an address given without one, or -1 when a port is required
         */
        private static List<InetSocketAddress> addresses(String option, String value, int defaultPort) {
            List<InetSocketAddress> list = new ArrayList<>();
            for (String part : value.split(",")) {
                String p = part.trim();
                int colon = p.lastIndexOf(':');
                boolean bracketed = p.startsWith("[") && p.endsWith("]");
                if (defaultPort > 0 && !p.isEmpty() && (colon < 0 || bracketed)) {
                    // a host alone ("10.0.0.1", "[::1]"): the default port
                    list.add(new InetSocketAddress(p.replace("[", "").replace("]", ""), defaultPort));
                    continue;
                }
                if (colon <= 0 || colon == p.length() - 1) {
                    throw new IllegalArgumentException(
                            option + " takes host:port[,host:port...], was \"" + value + "\"");
                }
                int port;
                try {
                    port = Integer.parseInt(p.substring(colon + 1));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(
                            option + " port must be a number in [1, 65535], was \"" + p.substring(colon + 1) + "\"");
                }
                if (port < 1 || port > 65535) {
                    throw new IllegalArgumentException(option + " port must be in [1, 65535], was " + port);
                }
                String host = p.substring(0, colon).replace("[", "").replace("]", "");
                list.add(new InetSocketAddress(host, port));
            }
            return List.copyOf(list);
        }

        private static String nonBlank(String option, String value) {
            if (value.isBlank()) {
                throw new IllegalArgumentException(option + " must not be empty");
            }
            return value.trim();
        }

        /** A CQL name the demo puts into statements: letters, digits and underscores only. */
        private static String identifier(String option, String value) {
            if (!value.matches("[a-z][a-z0-9_]{0,47}")) {
                throw new IllegalArgumentException(option
                        + " must be a lower-case CQL name (a letter, then letters, digits or _; at most 48), was \""
                        + value + "\"");
            }
            return value;
        }

        private static List<String> modes(String value) {
            List<String> list = new ArrayList<>();
            for (String m : value.split(",")) {
                String mode = m.trim().toLowerCase(Locale.ROOT);
                if (!List.of("none", "hedge", "native").contains(mode)) {
                    throw new IllegalArgumentException(
                            "--modes takes a list of none, hedge, native, was \"" + value + "\"");
                }
                list.add(mode);
            }
            return List.copyOf(list);
        }
    }

    static final String HELP =
            """
            hedge demo: the same open-loop load without hedging, with hedge-grpc and with grpc-java's
            native hedgingPolicy (or, with --cassandra, with hedge-cassandra and with the driver's
            speculative executions), side by side.

              --seconds N          measured seconds in all, split between the modes (default 20)
              --rate R             calls started per second, whatever the latency (default 200)
              --warmup S           unrecorded warm-up per mode, seconds (default 1)
              --jvm-warmup S       before any mode is measured, each mode runs S seconds unrecorded on
                                   a channel (or session) of its own and hedge on an executor of its
                                   own, all closed after, so that every mode's code is loaded and
                                   compiled alike; 0 skips it (default 3)
              --report FILE        where to write the HTML report (default target/hedge-demo-report.html)
              --modes LIST         any of none,hedge,native (default all three, in that order)
              --hedge-percentile P hedge-grpc: hedge after this percentile of recent latency (default 0.96,
                                   the interceptor's default delay; before its first estimate, any
                                   percentile hedges at the core's warm-up bound)
              --budget F           hedge-grpc: at most F extra attempts per call (default 0.05)
              --max-attempts N     attempts per call for both hedging modes, in [1, 5] (default 3)
              --native-delay-ms D  native hedgingDelay (default: the delay hedge-grpc reached;
                                   else the p95 measured without hedging; else 10)
              --deadline-ms D      per-call deadline; the driver's request timeout (default 2000)
            Embedded backends (the default: three replicas on 127.0.0.1):
              --median-ms M        healthy median service time (default 2)
              --stall-percent P    share of replica 3's requests that stall 40-250 ms (default 10)
              --seed N             seeds the replicas' latency (default 42)
            Real servers instead:
              --grpc H:P,H:P,...   the replicas to call (plaintext); nothing is started
              --method NAME        unary method to call with an empty request; it must be safe to
                                   repeat (default grpc.health.v1.Health/Check)
            A Cassandra cluster instead: no hedging, hedge-cassandra's HedgedCqlSession (with
            --hedge-percentile, --budget, --max-attempts) and the driver's ConstantSpeculativeExecutionPolicy
            (--max-attempts executions, delay as --native-delay-ms says, 1 ms timer tick); it creates
            nothing unless --create-schema says so:
              --cassandra H:P,...  contact points (port 9042 when omitted)
              --datacenter DC      the driver's local datacenter (default: inferred from the
                                   contact points)
              --keyspace K         keyspace of the demo's table (default hedge_demo)
              --table T            the demo's table, k int PRIMARY KEY, v text (default kv); each
                                   call reads SELECT v FROM K.T WHERE k = ? for a random k < --keys
              --keys N             keys read, and rows written by --create-schema (default 1000)
              --create-schema      create K (replication factor min(3, nodes of the local
                                   datacenter)) and T if absent, and write --keys rows
              --cql STATEMENT      read this SELECT instead, as is, on every call
              --consistency CL     consistency level of the reads (default LOCAL_ONE)
            """;

    /**
     * Runs the demo and exits.
     *
     * @param args see {@code --help}
     */
    public static void main(String[] args) {
        // grpc-netty's start-up INFO lines would land in the middle of the table
        QUIET.forEach(l -> l.setLevel(java.util.logging.Level.WARNING));
        // so would the Cassandra driver's (slf4j-simple reads this when its first logger is made)
        if (System.getProperty("org.slf4j.simpleLogger.log.com.datastax.oss.driver") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.com.datastax.oss.driver", "warn");
        }
        int status;
        try {
            run(args, System.out);
            status = 0;
        } catch (IllegalArgumentException e) {
            System.err.println("hedge demo: " + e.getMessage());
            status = 2;
        } catch (Exception e) {
            System.err.println("hedge demo failed: " + e);
            status = 1;
        }
        System.exit(status);
    }

    /**
     * What a run produced.
     *
     * @param requestsPerReplica requests each embedded replica received (empty with --grpc, --cassandra)
     * @param cassandra what only the --cassandra mode measures, else null
     */
    record Summary(List<PhaseResult> phases, Path report, long[] requestsPerReplica, CassandraDemo.Stats cassandra) {}

    static Summary run(String[] args, PrintStream out) throws IOException, InterruptedException {
        Options o = Options.parse(args);
        if (o.help) {
            out.print(HELP);
            return new Summary(List.of(), null, new long[0], null);
        }
        if (!o.cassandra.isEmpty()) {
            return CassandraDemo.run(o, out);
        }
        boolean embedded = o.grpc.isEmpty();
        DemoBackends backends = null;
        try {
            List<InetSocketAddress> addresses;
            String methodName;
            List<String> setup = new ArrayList<>();
            if (embedded) {
                backends = DemoBackends.start(o.medianMillis, o.stallPercent, o.seed);
                addresses = backends.addresses();
                methodName = DemoService.METHOD;
                setup.add(String.format(
                        Locale.ROOT,
                        "backend: 3 embedded gRPC replicas on 127.0.0.1, lognormal latency (median %s ms) with a"
                                + " Pareto tail on 1%% of requests; replica 3 stalls %s%% of its requests for 40-250 ms",
                        trim(o.medianMillis),
                        trim(o.stallPercent)));
            } else {
                addresses = o.grpc;
                methodName = o.method;
                setup.add("backend: " + addresses.size() + " gRPC servers " + addresses + ", method " + methodName);
            }
            long measurePerMode = Math.round(o.seconds * 1000 / o.modes.size());
            long warmup = Math.round(o.warmupSeconds * 1000);
            setup.add(String.format(
                    Locale.ROOT,
                    "load: %s calls/s open-loop, %s s measured per mode after %s s of warm-up, deadline %d ms",
                    trim(o.rate),
                    trim(measurePerMode / 1000.0),
                    trim(o.warmupSeconds),
                    o.deadlineMillis));
            long jvmWarmup = Math.round(o.jvmWarmupSeconds * 1000);
            if (jvmWarmup > 0) {
                setup.add(jvmWarmupLine(o, "channel"));
            }
            out.println("hedge demo");
            for (String line : setup) {
                out.println("  " + line);
            }
            out.println();

            String target = DemoService.target(addresses);
            MethodDescriptor<byte[], byte[]> method = DemoService.method(methodName, true);
            ConsoleProgress progress = new ConsoleProgress(out, o.progress, o.modes.size(), warmup + measurePerMode);
            List<PhaseResult> phases = new ArrayList<>();
            Double nativeDelay = o.nativeDelayMillis;
            String nativeDelaySource = "";
            if (jvmWarmup > 0) {
                out.printf(
                        Locale.ROOT,
                        "warming the JVM: each mode %s s on a channel of its own, not recorded%n",
                        trim(o.jvmWarmupSeconds));
                for (String mode : new LinkedHashSet<>(o.modes)) {
                    ModeChannel m = open(mode, o, target, methodName, nativeDelay);
                    try {
                        new LoadDriver(m.channel(), method, new byte[0], o.deadlineMillis).warm(o.rate, jvmWarmup);
                    } finally {
                        m.channel().shutdownNow();
                        m.channel().awaitTermination(5, TimeUnit.SECONDS);
                    }
                }
            }
            for (String mode : o.modes) {
                if (mode.equals("native") && nativeDelay == null) {
                    nativeDelay = DEFAULT_NATIVE_DELAY_MILLIS;
                    nativeDelaySource = " (default)";
                }
                ModeChannel m = open(mode, o, target, methodName, nativeDelay);
                String label = m.label();
                ManagedChannel channel = m.channel();
                HedgingClientInterceptor hedging = m.hedging();
                if (mode.equals("native")) {
                    setup.add(String.format(
                            Locale.ROOT,
                            "grpc native hedging: hedgingPolicy maxAttempts %d, hedgingDelay %s ms%s",
                            o.maxAttempts,
                            trim(nativeDelay),
                            nativeDelaySource));
                }
                if (hedging != null) {
                    setup.add(String.format(
                            Locale.ROOT,
                            "hedge-grpc: hedge after the p%s of recent per-attempt latency, budget %s%% extra"
                                    + " attempts, maxAttempts %d, hedge_round_robin balancer%s",
                            trim(100 * o.hedgePercentile),
                            trim(100 * o.budget),
                            o.maxAttempts,
                            String.format(
                                    Locale.ROOT,
                                    "; before the percentile's first estimate, the core's warm-up bound"
                                            + " and %s initial tokens",
                                    trim(hedging.budget().initialTokens()))));
                }
                progress.startPhase(label);
                try {
                    LoadDriver driver = new LoadDriver(channel, method, new byte[0], o.deadlineMillis);
                    PhaseResult r = driver.run(label, o.rate, warmup, measurePerMode, progress);
                    phases.add(r);
                    if (o.nativeDelayMillis == null) {
                        if (hedging != null) {
                            // the delay hedge-grpc had settled on: both hedge after the same percentile
                            long nanos = hedging.executor(methodName)
                                    .map(e -> e.currentDelayNanos())
                                    .orElse(Long.MAX_VALUE);
                            if (nanos > 0 && nanos < TimeUnit.MILLISECONDS.toNanos(o.deadlineMillis)) {
                                nativeDelay = Math.max(1.0, Math.ceil(nanos / 1e6));
                                nativeDelaySource = " (the delay hedge-grpc had reached)";
                            }
                        } else if (nativeDelay == null && r.successes() > 0) {
                            nativeDelay = Math.max(1.0, Math.ceil(r.percentileMillis(0.95)));
                            nativeDelaySource = " (the p95 measured without hedging)";
                        }
                    }
                } finally {
                    channel.shutdownNow();
                    channel.awaitTermination(5, TimeUnit.SECONDS);
                }
            }
            progress.done();
            out.println();
            printTable(out, phases);
            long[] perReplica = backends == null ? new long[0] : backends.received();
            if (backends != null) {
                out.printf(
                        Locale.ROOT,
                        "%nrequests per replica over the whole run, warm-ups and hedges included: %s;"
                                + " %d losing attempts cancelled%n",
                        joined(perReplica),
                        backends.cancelled());
            }
            out.println("  extra load = attempts sent / calls - 1; hedges won = calls answered by an attempt other"
                    + " than the first");
            out.println("  (a 2-core machine shared with other work makes the figures noisy: run it twice)");
            Path report = o.report.toAbsolutePath().normalize();
            HtmlReport.write(report, "hedge demo", setup, phases);
            out.println();
            out.println("HTML report: " + shown(report));
            return new Summary(List.copyOf(phases), report, perReplica, null);
        } finally {
            if (backends != null) {
                backends.close();
            }
        }
    }

    /** grpc-java's native hedging delay when neither the command line nor a hedge-grpc phase gives one. */
    static final double DEFAULT_NATIVE_DELAY_MILLIS = 10.0;

    /**
     * @param file an absolute path
     * @return the path relative to the working directory when it lies under it, else as given
     */
    static Path shown(Path file) {
        Path cwd = Path.of("").toAbsolutePath().normalize();
        return file.startsWith(cwd) ? cwd.relativize(file) : file;
    }

    /** The setup line that says what the JVM warm-up did. */
    static String jvmWarmupLine(Options o, String connection) {
        return String.format(
                Locale.ROOT,
                "before any mode was measured, each ran %s s unrecorded on a %s of its own, so every mode's"
                        + " code was loaded and compiled alike; each measured mode starts on a new %s after a full"
                        + " garbage collection, hedge's delay and budget on a new executor",
                trim(o.jvmWarmupSeconds),
                connection,
                connection);
    }

    /** One mode's channel, with hedge-grpc's interceptor for the {@code hedge} mode (else null). */
    private record ModeChannel(String label, ManagedChannel channel, HedgingClientInterceptor hedging) {}

    /**
     * A new channel for one mode, and for {@code hedge} a new interceptor (a new executor: its delay
     * and budget start from nothing).
     *
     * @param methodName the method called, for the native mode's service config
     * @param nativeDelay grpc-java's hedging delay for the {@code native} mode, milliseconds; null for
     *     {@link #DEFAULT_NATIVE_DELAY_MILLIS}
     */
    private static ModeChannel open(String mode, Options o, String target, String methodName, Double nativeDelay) {
        switch (mode) {
            case "none" -> {
                return new ModeChannel(
                        "no hedging", channel(target, "round_robin").build(), null);
            }
            case "hedge" -> {
                // the interceptor's defaults (p96 delay under a 5% budget), as set on the command line
                HedgeConfig.Builder config = HedgeConfig.from(HedgingClientInterceptor.DEFAULT_CONFIG)
                        .budgetRatio(o.budget)
                        .maxAttempts(o.maxAttempts);
                if (o.hedgePercentile != DEFAULT_HEDGE_PERCENTILE) {
                    config.delay(DelayPolicy.percentile(o.hedgePercentile)
                            .budgetFeedback(true) // as the interceptor's default delay
                            .build());
                }
                HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                        .defaults(config.build())
                        .build();
                ManagedChannel channel = channel(target, HedgeLoadBalancerProvider.POLICY_NAME)
                        .intercept(hedging)
                        .build();
                return new ModeChannel("hedge-grpc", channel, hedging);
            }
            default -> {
                ManagedChannel channel = channel(target, "round_robin")
                        .defaultServiceConfig(nativeHedging(
                                methodName,
                                o.maxAttempts,
                                nativeDelay == null ? DEFAULT_NATIVE_DELAY_MILLIS : nativeDelay))
                        .enableRetry()
                        .build();
                return new ModeChannel("grpc native hedging", channel, null);
            }
        }
    }

    private static NettyChannelBuilder channel(String target, String policy) {
        return NettyChannelBuilder.forTarget(target).usePlaintext().defaultLoadBalancingPolicy(policy);
    }

    /** grpc-java's service config for native hedging of one service's methods. */
    static Map<String, Object> nativeHedging(String fullMethodName, int maxAttempts, double delayMillis) {
        String service = fullMethodName.substring(0, Math.max(0, fullMethodName.lastIndexOf('/')));
        Map<String, Object> policy = new LinkedHashMap<>();
        policy.put("maxAttempts", (double) maxAttempts);
        policy.put("hedgingDelay", String.format(Locale.ROOT, "%.3fs", delayMillis / 1000.0));
        policy.put("nonFatalStatusCodes", List.of("UNAVAILABLE"));
        Map<String, Object> methodConfig = new LinkedHashMap<>();
        methodConfig.put("name", List.of(Map.of("service", service)));
        methodConfig.put("hedgingPolicy", policy);
        return Map.of("methodConfig", List.of(methodConfig));
    }

    static void printTable(PrintStream out, List<PhaseResult> phases) {
        out.printf(
                Locale.ROOT,
                "%-20s %7s %9s %9s %9s %9s %9s %11s %11s %7s%n",
                "",
                "calls",
                "p50",
                "p90",
                "p99",
                "p99.9",
                "max",
                "extra load",
                "hedges won",
                "errors");
        for (PhaseResult r : phases) {
            out.printf(
                    Locale.ROOT,
                    "%-20s %7d %9s %9s %9s %9s %9s %10.1f%% %11d %7d%n",
                    r.label(),
                    r.calls(),
                    HtmlReport.ms(r.percentileMillis(0.5)),
                    HtmlReport.ms(r.percentileMillis(0.9)),
                    HtmlReport.ms(r.percentileMillis(0.99)),
                    HtmlReport.ms(r.percentileMillis(0.999)),
                    HtmlReport.ms(r.maxMillis()),
                    100 * r.extraLoad(),
                    r.hedgesWon(),
                    r.errors());
        }
        out.printf(
                Locale.ROOT,
                "%n%d slowest calls of each mode, and when each started (s into the measured phase):%n",
                SLOWEST);
        for (PhaseResult r : phases) {
            StringBuilder b = new StringBuilder();
            for (int i : r.slowest(SLOWEST)) {
                b.append(b.length() == 0 ? "" : ", ")
                        .append(HtmlReport.ms(r.latencyNanos(i) / 1e6))
                        .append(String.format(Locale.ROOT, " at %.2f s", r.startNanos(i) / 1e9));
            }
            out.printf(Locale.ROOT, "%-20s %s%n", r.label(), b);
        }
        StringBuilder gc = new StringBuilder();
        for (PhaseResult r : phases) {
            gc.append(gc.length() == 0 ? "" : ", ")
                    .append(r.label())
                    .append(' ')
                    .append(
                            r.gcPauses() == 0
                                    ? "none"
                                    : String.format(
                                            Locale.ROOT, "%d (%s)", r.gcPauses(), HtmlReport.ms(r.gcPauseMillis())));
        }
        out.printf(Locale.ROOT, "%ngarbage-collection pauses while each mode's measured calls ran: %s%n", gc);
    }

    /** How many of each mode's slowest calls the console lists. */
    static final int SLOWEST = 5;

    private static String joined(long[] v) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < v.length; i++) {
            b.append(i == 0 ? "" : " / ").append(v[i]);
        }
        return b.toString();
    }

    static String trim(double d) {
        if (d == Math.rint(d)) {
            return Long.toString((long) d);
        }
        return String.format(Locale.ROOT, "%.3f", d).replaceAll("0+$", "");
    }

    /** A one-line progress bar, redrawn in place; plain lines when {@code live} is false. */
    static final class ConsoleProgress implements LoadDriver.Progress {
        private final PrintStream out;
        private final boolean live;
        private final int phases;
        private final long phaseMillis;
        private int phase = -1;
        private String label = "";

        ConsoleProgress(PrintStream out, boolean live, int phases, long phaseMillis) {
            this.out = out;
            this.live = live;
            this.phases = phases;
            this.phaseMillis = phaseMillis;
        }

        void startPhase(String label) {
            phase++;
            this.label = label;
            if (!live) {
                out.println("running: " + label);
            }
        }

        @Override
        public void update(long elapsedMillis, int inFlight) {
            if (!live) {
                return;
            }
            double done =
                    (phase * phaseMillis + Math.min(elapsedMillis, phaseMillis)) / (double) (phases * phaseMillis);
            int width = 30;
            int filled = (int) Math.round(done * width);
            long left = Math.round((1 - done) * phases * phaseMillis / 1000.0);
            out.printf(
                    Locale.ROOT,
                    "\r[%s%s] %3d%%  %-20s  %4d in flight  ~%ds left ",
                    "#".repeat(filled),
                    ".".repeat(width - filled),
                    Math.round(done * 100),
                    label,
                    inFlight,
                    left);
            out.flush();
        }

        void done() {
            if (live) {
                update(phaseMillis, 0);
                out.println();
            }
        }
    }
}

package io.github.hedge.cassandra.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * A run's raw output, in files that can be committed and from which every figure of
 * docs/reliability.md is computed ({@link Tables}, {@link ReliabilityDoc}): per fault {@code
 * <fault>.properties} (title, phases, the constant policy's delay, when it ran), and per fault and
 * mode {@code <fault>-<mode>-requests.csv.gz} (every request: start and end in ns since the run
 * started, kind, sequence number, error), {@code <fault>-<mode>-run.properties} (events, counts,
 * writes not read back) and {@code <fault>-<mode>-statements.csv} (every non-idempotent statement:
 * what the client was told, executions per node, the row read back). Not thread-safe; static.
 */
final class Raw {
    private Raw() {}

    /** The raw output of the run in progress: {@code <reportDir>/raw}. */
    static final Path DIR = Report.DIR.resolve("raw");

    /** What a fault's runs share. */
    record Fault(String name, String title, int warmupS, int faultS, long constantDelayMs, String ranAt) {}

    /** One mode's run as read back. */
    record Run(LoadRun run, Workload.Check check) {}

    /** A fault's runs as read back, in mode order. */
    record Loaded(Fault fault, Map<Mode, Run> runs) {}

    static String file(String fault, Mode mode, String suffix) {
        return fault + "-" + mode.name().toLowerCase(Locale.ROOT) + suffix;
    }

    static void save(Path dir, Fault fault, List<LoadRun> runs, Map<Mode, Workload.Check> checks) {
        try {
            Files.createDirectories(dir);
            Map<String, String> f = new LinkedHashMap<>();
            f.put("title", fault.title());
            f.put("warmup_s", String.valueOf(fault.warmupS()));
            f.put("fault_s", String.valueOf(fault.faultS()));
            f.put("constant_delay_ms", String.valueOf(fault.constantDelayMs()));
            f.put("ran_at", fault.ranAt());
            f.put(
                    "modes",
                    String.join(",", runs.stream().map(r -> r.mode.name()).toList()));
            writeProperties(dir.resolve(fault.name() + ".properties"), f);
            for (LoadRun r : runs) {
                saveRun(dir, fault.name(), r, checks == null ? null : checks.get(r.mode));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void saveRun(Path dir, String fault, LoadRun r, Workload.Check c) throws IOException {
        try (Writer w = new OutputStreamWriter(
                new GZIPOutputStream(Files.newOutputStream(dir.resolve(file(fault, r.mode, "-requests.csv.gz")))),
                StandardCharsets.UTF_8)) {
            w.write("start_ns,end_ns,kind,seq,route,error\n");
            for (LoadRun.Sample s : r.samples) {
                w.write(s.start() + "," + s.end() + "," + s.kind() + "," + s.seq() + "," + s.route() + ","
                        + (s.ok()
                                ? ""
                                : s.error().replace(',', ';').replace('\n', ' ').replace('\r', ' ')) + "\n");
            }
        }
        Map<String, String> p = new LinkedHashMap<>();
        p.put("mode", r.mode.name());
        p.put("duration_ns", String.valueOf(r.durationNanos));
        r.events.forEach((name, at) -> p.put("event." + name + "_ns", String.valueOf(at)));
        p.put("marked_down_ns", String.valueOf(r.markedDownAt));
        p.put("hedge_delay_at_fault_ns", String.valueOf(r.hedgeDelayAtFault));
        p.put("hedge_delay_max_during_fault_ns", String.valueOf(r.hedgeDelayMaxDuringFault));
        p.put("hedges_sent", String.valueOf(r.hedgesSent));
        p.put("calls", String.valueOf(r.calls));
        p.put("wall_start_ms", String.valueOf(r.wallStartMillis));
        if (c != null) {
            p.put("inserts_acked", String.valueOf(c.acked()));
            p.put("inserts_missing", String.join(" ", c.missingInserts()));
            p.put("lwts_missing", String.join(" ", c.missingLwts()));
            StringBuilder b =
                    new StringBuilder("key,kind,told,executed_node1,executed_node2,executed_node3,refused,row\n");
            for (Workload.Statement s : c.statements()) {
                b.append(s.key()).append(',').append(s.kind()).append(',').append(s.told());
                for (long e : s.executedPerNode()) {
                    b.append(',').append(e);
                }
                b.append(',').append(s.refused()).append(',').append(s.row()).append('\n');
            }
            Files.writeString(dir.resolve(file(fault, r.mode, "-statements.csv")), b);
        }
        writeProperties(dir.resolve(file(fault, r.mode, "-run.properties")), p);
        StringBuilder pauses = new StringBuilder("start_ns,length_ns\n");
        for (long[] h : r.hiccups) {
            pauses.append(h[0]).append(',').append(h[1]).append('\n');
        }
        Files.writeString(dir.resolve(file(fault, r.mode, "-pauses.csv")), pauses);
    }

    static Loaded load(Path dir, String fault) {
        try {
            Properties f = readProperties(dir.resolve(fault + ".properties"));
            Fault info = new Fault(
                    fault,
                    f.getProperty("title"),
                    Integer.parseInt(f.getProperty("warmup_s")),
                    Integer.parseInt(f.getProperty("fault_s")),
                    Long.parseLong(f.getProperty("constant_delay_ms")),
                    f.getProperty("ran_at"));
            Map<Mode, Run> runs = new EnumMap<>(Mode.class);
            for (String m : f.getProperty("modes").split(",")) {
                Mode mode = Mode.valueOf(m);
                runs.put(mode, loadRun(dir, fault, mode));
            }
            return new Loaded(info, runs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Run loadRun(Path dir, String fault, Mode mode) throws IOException {
        Properties p = readProperties(dir.resolve(file(fault, mode, "-run.properties")));
        LoadRun r = LoadRun.loaded(mode, Long.parseLong(p.getProperty("duration_ns")));
        for (String name : new TreeMap<>(p)
                .keySet().stream()
                        .map(Object::toString)
                        .filter(k -> k.startsWith("event."))
                        .toList()) {
            r.events.put(
                    name.substring("event.".length(), name.length() - "_ns".length()),
                    Long.parseLong(p.getProperty(name)));
        }
        r.markedDownAt = Long.parseLong(p.getProperty("marked_down_ns"));
        r.hedgeDelayAtFault = Long.parseLong(p.getProperty("hedge_delay_at_fault_ns"));
        // files written before the delay was sampled through the fault hold only its value at the fault
        r.hedgeDelayMaxDuringFault = Long.parseLong(
                p.getProperty("hedge_delay_max_during_fault_ns", p.getProperty("hedge_delay_at_fault_ns")));
        r.hedgesSent = Long.parseLong(p.getProperty("hedges_sent"));
        r.calls = Long.parseLong(p.getProperty("calls"));
        r.wallStartMillis = Long.parseLong(p.getProperty("wall_start_ms"));
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                new GZIPInputStream(Files.newInputStream(dir.resolve(file(fault, mode, "-requests.csv.gz")))),
                StandardCharsets.UTF_8))) {
            // files written before the route column have five columns
            boolean routes = in.readLine().contains(",route,");
            String line;
            while ((line = in.readLine()) != null) {
                String[] c = line.split(",", routes ? 6 : 5);
                String error = c[c.length - 1];
                r.samples.add(new LoadRun.Sample(
                        Long.parseLong(c[0]),
                        Long.parseLong(c[1]),
                        Workload.Kind.valueOf(c[2]),
                        Long.parseLong(c[3]),
                        routes ? c[4] : "",
                        error.isEmpty() ? null : error));
            }
        }
        // the test JVM's pauses; files written before they were kept have none
        Path pauses = dir.resolve(file(fault, mode, "-pauses.csv"));
        if (Files.exists(pauses)) {
            for (String line : Files.readAllLines(pauses).stream().skip(1).toList()) {
                String[] c = line.split(",");
                r.hiccups.add(new long[] {Long.parseLong(c[0]), Long.parseLong(c[1])});
            }
        }
        Workload.Check check = null;
        Path statements = dir.resolve(file(fault, mode, "-statements.csv"));
        if (p.getProperty("inserts_acked") != null && Files.exists(statements)) {
            List<Workload.Statement> list = new ArrayList<>();
            for (String line : Files.readAllLines(statements)
                    .subList(1, Files.readAllLines(statements).size())) {
                String[] c = line.split(",");
                list.add(new Workload.Statement(
                        c[0],
                        Workload.Kind.valueOf(c[1]),
                        c[2].equals("null") ? null : Workload.Told.valueOf(c[2]),
                        new long[] {Long.parseLong(c[3]), Long.parseLong(c[4]), Long.parseLong(c[5])},
                        Long.parseLong(c[6]),
                        Long.parseLong(c[7])));
            }
            check = new Workload.Check(
                    Integer.parseInt(p.getProperty("inserts_acked")),
                    words(p.getProperty("inserts_missing")),
                    list,
                    words(p.getProperty("lwts_missing")));
        }
        return new Run(r, check);
    }

    private static List<String> words(String s) {
        return s == null || s.isBlank() ? List.of() : Arrays.asList(s.trim().split(" "));
    }

    /** Writes {@code values} as a properties file, in the given order and with no date line. */
    static void writeProperties(Path file, Map<String, String> values) throws IOException {
        StringBuilder b = new StringBuilder();
        values.forEach((k, v) -> b.append(k)
                .append('=')
                .append(v.replace("\\", "\\\\").replace("\n", "\\n"))
                .append('\n'));
        Files.writeString(file, b);
    }

    static Properties readProperties(Path file) throws IOException {
        Properties p = new Properties();
        try (var in = Files.newBufferedReader(file)) {
            p.load(in);
        }
        return p;
    }
}

package io.github.hedge.cassandra.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps docs/reliability.md's figures and their raw output together. The doc names its raw output
 * once ({@code <!-- raw: hedge-benchmarks/results/reliability-<date> -->}) and marks each generated
 * section ({@code <!-- begin: stall -->} ... {@code <!-- end: stall -->}); {@link #render} rebuilds
 * every marked section from the raw files alone ({@link Tables}): a line with when the run ran and a
 * link to the raw output (the command is stated once, at the top of the page), then the tables. {@link ReliabilityDocTest} checks that the
 * doc equals its rendering, and rewrites it (with the plots) on request. Static.
 */
final class ReliabilityDoc {
    private ReliabilityDoc() {}

    /** The command whose raw output the doc shows: the suite alone, as the doc says. */
    static final String COMMAND =
            "./mvnw -B verify -pl hedge-cassandra-it -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dhedge.it.modes=all";

    static final Path ROOT = Path.of(System.getProperty("hedge.it.repoRoot", ".."));
    static final Path DOC = ROOT.resolve("docs/reliability.md");
    static final Path IMAGES = ROOT.resolve("docs/img/reliability");

    private static final Pattern RAW = Pattern.compile("<!-- raw: (\\S+) -->");
    private static final Pattern SECTION =
            Pattern.compile("(<!-- begin: ([a-z-]+) -->\\n)(.*?)(<!-- end: \\2 -->)", Pattern.DOTALL);

    /** @return the raw output directory the doc names, relative to the repository root */
    static String rawDir(String doc) {
        Matcher m = RAW.matcher(doc);
        if (!m.find()) {
            throw new IllegalStateException("the doc names no raw output (<!-- raw: <dir> -->)");
        }
        return m.group(1);
    }

    /** @return {@code doc} with every marked section rebuilt from its raw output */
    static String render(String doc) {
        if (!doc.contains(COMMAND)) {
            throw new IllegalStateException("the doc does not state its command: " + COMMAND);
        }
        String raw = rawDir(doc);
        Path dir = ROOT.resolve(raw);
        Map<String, String> tables = Tables.sections(dir);
        Matcher m = SECTION.matcher(doc);
        StringBuilder out = new StringBuilder();
        List<String> seen = new ArrayList<>();
        while (m.find()) {
            String name = m.group(2);
            String table = tables.get(name);
            if (table == null) {
                throw new IllegalStateException("no table named " + name + "; known: " + tables.keySet());
            }
            seen.add(name);
            String files = name.equals("hygiene") ? "hygiene.properties" : name + "*";
            String body = "Run ended " + Tables.ranAt(dir, name) + " (command at the top of this page); raw output: [`"
                    + raw.substring(raw.lastIndexOf('/') + 1) + "/" + files + "`](../" + raw + "/).\n\n" + table;
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + body + m.group(4)));
        }
        m.appendTail(out);
        if (!seen.containsAll(tables.keySet())) {
            throw new IllegalStateException("the doc has sections " + seen + ", the raw output " + tables.keySet());
        }
        return out.toString();
    }

    /** Rewrites the doc's marked sections and its plots from the raw output it names. */
    static void write() {
        try {
            String doc = Files.readString(DOC);
            Files.writeString(DOC, render(doc));
            System.setProperty("java.awt.headless", "true");
            Path dir = ROOT.resolve(rawDir(doc));
            Files.createDirectories(IMAGES);
            for (String fault : List.of("node-death", "stall", "slow-link")) {
                Raw.Loaded l = Raw.load(dir, fault);
                Report.plot(
                        IMAGES,
                        fault,
                        l.fault().title(),
                        l.runs().values().stream().map(Raw.Run::run).toList());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

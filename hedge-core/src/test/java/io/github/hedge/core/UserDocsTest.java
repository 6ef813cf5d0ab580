package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The user docs (README.md, examples/README.md and every {@code docs/*.md}) stay a manual, not a lab
 * notebook, and their links and benchmark figures hold. The rules, each checked on every page:
 *
 * <ul>
 *   <li><b>No commit hash</b>: a lowercase run of 7 to 40 hex digits that holds at least one digit
 *       and at least one letter {@code a-f}, not touching a letter, digit or underscore on either
 *       side. The letter-and-digit rule keeps ordinary words ({@code deadbeef}-free English such as
 *       "added", "decade", "facade") and plain numbers ({@code 1000000}) out; the bounds keep
 *       identifiers such as {@code 0x7fffffff} or {@code p9999} out. Link targets ({@code (...)}
 *       after {@code ]}) are not checked, because raw result files keep the names they were written
 *       under; the text a reader sees is.
 *   <li><b>No issue number</b>: "issue 7", "issues 3", "PR 12", "pull request 12" at any number of
 *       digits, and {@code #} followed by two or more digits ({@code #12}). A single digit after
 *       {@code #} is allowed because pages number attempts that way ({@code #1 (primary)}, the
 *       slow-call log's {@code winner=#2}).
 *   <li><b>No session or team words</b>: "this/that/previous/next/earlier/last session", "the
 *       lead", "lead's", "the brief", "seed 003"-style zero-padded lab run labels.
 *   <li><b>No path outside the repository</b>: {@code /tmp/}, {@code /work/}, {@code /home/},
 *       {@code ../shared}, {@code shared/notes} (the team's notes), and any relative link that resolves outside the repository root.
 *   <li><b>No broken relative link</b>: every {@code [text](target)} and {@code ![alt](target)}
 *       outside code whose target is not a URL ({@code scheme:}) names a file or folder that exists,
 *       and its {@code #anchor}, if any, is a heading of the target page (GitHub's slug: lower case,
 *       punctuation other than {@code -} and {@code _} dropped, spaces to {@code -}, repeats
 *       suffixed {@code -1}, {@code -2}) or an {@code <a id>}/{@code <a name>} in it.
 *   <li><b>Benchmark figures are in their raw output</b>: in docs/benchmarks.md, every table's
 *       section (from the heading above the table to the table's last row) links at least one file
 *       under {@code hedge-benchmarks/results/} when its body holds a figure. In every body row, every number outside the first
 *       column (the row's label) and outside code spans must be found in one of those files. A
 *       number is found when the file holds a number that rounds to it at the decimals shown (so
 *       {@code 1.05} is found by {@code 1.0497}); a number followed by {@code %} is also found as a
 *       fraction ({@code 0.32%} by {@code 0.0032}); {@code 1,000} is read as 1000. Numbers glued to a
 *       letter before them ({@code p99}, {@code t2}) are names, not figures, and are skipped.
 *   <li><b>No commit hash in a linked raw result's name</b>: a link to a file or folder under {@code
 *       hedge-benchmarks/results/} whose name holds a run of 7 to 40 hex digits, not touching a
 *       letter or digit on either side ({@code sweep-seed1-680d05c.jsonl}, also all-digit hashes such
 *       as {@code load-8869328.json}), fails: raw results are named by the date of their run
 *       ({@code sweep-seed1-2026-11-24.jsonl}), so a reader can tell which is current.
 *   <li><b>Links from the Javadoc into the manual hold</b>: every {@code docs/<page>.md} a main
 *       source file names (in any module) exists, its {@code #anchor}, if any, is a heading of that
 *       page, and it is not cited by a section number ({@code docs/benchmarks.md 2.6}): the pages
 *       have no numbered sections, so such a citation points nowhere.
 * </ul>
 */
class UserDocsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    static final Pattern HASH =
            Pattern.compile("(?<![A-Za-z0-9_])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![A-Za-z0-9_])");
    static final Pattern ISSUE =
            Pattern.compile("(?i)\\b(?:issues?|PR|pull requests?) #?\\d+\\b|(?<![\\w&/])#\\d{2,}\\b");
    static final Pattern SESSION =
            Pattern.compile("(?i)\\b(?:this|that|previous|next|earlier|last) session\\b|\\bthe lead\\b|\\blead's\\b"
                    + "|\\bthe brief\\b|\\bseed 0\\d+\\b");
    static final Pattern OUTSIDE =
            Pattern.compile("(?<![\\w.])/(?:tmp|work|home)/|\\.\\./shared\\b|(?<![\\w./])shared/notes\\b");
    private static final Pattern LINK =
            Pattern.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*\\])*\\]\\(([^)\\s]*)(?:\\s+\"[^\"]*\")?\\)");
    static final Pattern RAW_NAME_HASH = Pattern.compile("(?<![A-Za-z0-9])[0-9a-f]{7,40}(?![A-Za-z0-9])");
    private static final Pattern LINK_TARGET = Pattern.compile("\\]\\([^)]*\\)");
    private static final Pattern FENCE = Pattern.compile("(?ms)^\\s*```.*?^\\s*```[^\\n]*$");
    private static final Pattern CODE_SPAN = Pattern.compile("`[^`\\n]*`");
    private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    static final Pattern DOC_NUMBER =
            Pattern.compile("(?<![A-Za-z_0-9.])(\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.(\\d+))?(?![\\d])(\\s*%)?");
    private static final Pattern RAW_NUMBER = Pattern.compile("\\d+(?:\\.\\d+)?(?:[eE][-+]?\\d+)?");
    static final Pattern DOC_REFERENCE = Pattern.compile(
            "docs/([A-Za-z0-9_-]+\\.md)(?:#([A-Za-z0-9_-]+))?((?:\\}|\\))?,?\\s+(?:\\*\\s+)?(?:sections?\\s+)?\\d+(?:\\.\\d+)*\\b(?![.,]\\d|\\s*(?:%|x\\b|ms\\b)))?");

    static List<Path> pages() {
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        pages.add(ROOT.resolve("examples/README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    @Test
    void should_name_no_commit_hash_issue_session_word_or_outside_path_when_a_user_page_is_read() {
        List<String> problems = new ArrayList<>();
        for (Path page : pages()) {
            problems.addAll(wordProblems(ROOT.relativize(page).toString(), read(page)));
        }
        assertThat(problems).as("lab-notebook residue in the user docs").isEmpty();
    }

    @Test
    void should_resolve_every_relative_link_and_anchor_when_a_user_page_links_it() {
        List<String> problems = new ArrayList<>();
        for (Path page : pages()) {
            problems.addAll(linkProblems(ROOT, page));
        }
        assertThat(problems).as("broken relative links").isEmpty();
    }

    @Test
    void should_name_raw_results_by_date_not_commit_hash_when_a_user_page_links_them() {
        List<String> problems = new ArrayList<>();
        for (Path page : pages()) {
            problems.addAll(rawNameProblems(ROOT, page));
        }
        assertThat(problems).as("raw result files named by a commit hash").isEmpty();
    }

    @Test
    void should_report_a_raw_result_named_by_a_commit_hash_when_a_page_links_it(@TempDir Path dir) throws IOException {
        Path results = dir.resolve("hedge-benchmarks/results");
        Files.createDirectories(results.resolve("reliability-2026-11-27"));
        for (String name : List.of(
                "sweep-seed1-680d05c.jsonl",
                "load-8869328.json",
                "jmh-072d06a-vs-4dab2ee.txt",
                "sweep-seed1-2026-11-24b.jsonl",
                "tail-pareto_2_1.json",
                "sweep-rate10-1M-seed1-2026-11-24.jsonl")) {
            Files.writeString(results.resolve(name), "{}");
        }
        Files.createDirectories(dir.resolve("docs"));
        Path page = dir.resolve("docs/benchmarks.md");
        Files.writeString(
                page,
                "# B\n\n[a](../hedge-benchmarks/results/sweep-seed1-680d05c.jsonl), "
                        + "[b](../hedge-benchmarks/results/load-8869328.json), "
                        + "[c](../hedge-benchmarks/results/jmh-072d06a-vs-4dab2ee.txt#x), "
                        + "[d](../hedge-benchmarks/results/sweep-seed1-2026-11-24b.jsonl), "
                        + "[e](../hedge-benchmarks/results/tail-pareto_2_1.json), "
                        + "[f](../hedge-benchmarks/results/sweep-rate10-1M-seed1-2026-11-24.jsonl), "
                        + "[g](../hedge-benchmarks/results/reliability-2026-11-27/), "
                        + "[h](../hedge-core/src/main/java/X680d05c.java)\n");
        assertThat(rawNameProblems(dir, page))
                .anyMatch(p -> p.contains("sweep-seed1-680d05c.jsonl") && p.contains("'680d05c'"))
                .anyMatch(p -> p.contains("load-8869328.json"))
                .anyMatch(p -> p.contains("jmh-072d06a-vs-4dab2ee.txt"))
                .hasSize(3);
    }

    /** Links from {@code page} to raw results under {@code hedge-benchmarks/results/} whose name holds a hash. */
    static List<String> rawNameProblems(Path root, Path page) {
        Path results = root.resolve("hedge-benchmarks/results");
        String text = withoutCode(read(page));
        List<String> problems = new ArrayList<>();
        Matcher m = LINK.matcher(text);
        while (m.find()) {
            String target = m.group(1).replaceAll("#.*", "");
            if (target.isEmpty() || target.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*")) {
                continue;
            }
            Path resolved = page.getParent().resolve(target).normalize();
            if (!resolved.startsWith(results) || resolved.equals(results)) {
                continue;
            }
            Matcher hash = RAW_NAME_HASH.matcher(results.relativize(resolved).toString());
            if (hash.find()) {
                problems.add(
                        root.relativize(page) + ": link '" + m.group(1) + "' names a raw result by the commit hash '"
                                + hash.group() + "': name it by the date of its run");
            }
        }
        return problems;
    }

    @Test
    void should_find_every_benchmark_figure_in_its_linked_raw_output_when_benchmarks_md_has_a_table() {
        Path page = ROOT.resolve("docs/benchmarks.md");
        List<String> problems = figureProblems(ROOT, page);
        assertThat(problems)
                .as("figures of docs/benchmarks.md not in their raw output")
                .isEmpty();
    }

    @Test
    void should_resolve_every_docs_link_and_anchor_when_the_javadoc_cites_the_manual() {
        assertThat(javadocLinkProblems(ROOT))
                .as("links from main sources into docs/*.md")
                .isEmpty();
    }

    @Test
    void should_report_a_missing_page_anchor_or_section_number_when_the_javadoc_cites_them(@TempDir Path dir)
            throws IOException {
        Files.createDirectories(dir.resolve("docs"));
        Files.writeString(dir.resolve("docs/ok.md"), "# Real heading\n\n## Other request rates\n");
        Path src = dir.resolve("mod/src/main/java/x");
        Files.createDirectories(src);
        Files.writeString(
                src.resolve("X.java"),
                "/**\n * See {@code docs/ok.md#real-heading}, docs/ok.md, (docs/ok.md#other-request-rates) and\n"
                        + " * {@code docs/ok.md#other-request-rates} for 1.05x; but docs/gone.md, {@code\n"
                        + " * docs/ok.md#nope} and docs/ok.md 2.6, docs/ok.md, sections 2.8 and 2.9.\n */\nclass X {}\n");
        assertThat(javadocLinkProblems(dir))
                .anyMatch(p -> p.contains("docs/gone.md") && p.contains("missing page"))
                .anyMatch(p -> p.contains("#nope") && p.contains("missing anchor"))
                .anyMatch(p -> p.contains("2.6") && p.contains("section number"))
                .anyMatch(p -> p.contains("2.8") && p.contains("section number"))
                .hasSize(4);
    }

    /** Problems of the {@code docs/*.md} references in every module's main sources under {@code root}. */
    static List<String> javadocLinkProblems(Path root) {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(root)) {
            sources = files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> {
                        String rel = root.relativize(p).toString().replace('\\', '/');
                        return rel.contains("src/main/java/") && !rel.contains("/target/") && !rel.startsWith(".");
                    })
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> problems = new ArrayList<>();
        Map<Path, Set<String>> anchorsByPage = new HashMap<>();
        for (Path source : sources) {
            String text = read(source);
            Matcher m = DOC_REFERENCE.matcher(text);
            while (m.find()) {
                int line = 1
                        + (int) text.substring(0, m.start())
                                .chars()
                                .filter(c -> c == '\n')
                                .count();
                String where =
                        root.relativize(source) + ":" + line + ": '" + m.group().strip() + "'";
                Path page = root.resolve("docs").resolve(m.group(1));
                if (!Files.isRegularFile(page)) {
                    problems.add(where + " names a missing page");
                } else if (m.group(2) != null
                        && !anchorsByPage
                                .computeIfAbsent(page, p -> anchors(read(p)))
                                .contains(m.group(2))) {
                    problems.add(where + " names a missing anchor");
                } else if (m.group(3) != null) {
                    problems.add(where + " cites a section number; the pages have none: link an anchor");
                }
            }
        }
        return problems;
    }

    @Test
    void should_report_a_planted_hash_issue_session_word_path_and_broken_link_when_a_page_has_them(@TempDir Path dir)
            throws IOException {
        Files.createDirectories(dir.resolve("docs"));
        Files.writeString(dir.resolve("docs/ok.md"), "# Real heading\n");
        String page = "# Title\n\nMeasured at `680d05c`, see issue 7 and #12; this session, the lead.\n"
                + "Output in /tmp/x and ../shared/notes; see shared/notes/adapters.md.\n"
                + "[gone](missing.md) [bad anchor](ok.md#nope) [good](ok.md#real-heading) [self](#title)\n"
                + "Not hashes: added, decade, 1000000, 0x7fffffff, p9999, attempt #2.\n";
        Path file = dir.resolve("docs/page.md");
        Files.writeString(file, page);
        List<String> words = wordProblems("docs/page.md", page);
        assertThat(words)
                .anyMatch(p -> p.contains("680d05c"))
                .anyMatch(p -> p.contains("issue 7"))
                .anyMatch(p -> p.contains("#12"))
                .anyMatch(p -> p.contains("this session"))
                .anyMatch(p -> p.contains("the lead"))
                .anyMatch(p -> p.contains("/tmp/"))
                .anyMatch(p -> p.contains("../shared"))
                .anyMatch(p -> p.contains("'shared/notes'"))
                .hasSize(8);
        assertThat(linkProblems(dir, file))
                .anyMatch(p -> p.contains("missing.md"))
                .anyMatch(p -> p.contains("ok.md#nope"))
                .hasSize(2);
    }

    @Test
    void should_report_a_figure_missing_from_its_raw_output_when_a_table_row_misquotes_it(@TempDir Path dir)
            throws IOException {
        Files.createDirectories(dir.resolve("docs"));
        Files.createDirectories(dir.resolve("hedge-benchmarks/results"));
        Files.writeString(dir.resolve("hedge-benchmarks/results/r.json"), "{\"p999\":1.0497,\"share\":0.0032}");
        Path page = dir.resolve("docs/benchmarks.md");
        Files.writeString(
                page,
                "## A\n\nRaw: [r](../hedge-benchmarks/results/r.json).\n\n"
                        + "| case | p99.9 | denied |\n|---|---|---|\n| b = 0.05 | 1.05 | 0.32% |\n| c | 1.06 | 0.32% |\n\n"
                        + "## B\n\n| case | x |\n|---|---|\n| d | 1 |\n\n## C\n\n| words only | x |\n|---|---|\n| d | e |\n");
        assertThat(figureProblems(dir, page))
                .anyMatch(p -> p.contains("1.06"))
                .anyMatch(p -> p.contains("links no raw output"))
                .hasSize(2);
    }

    static List<String> wordProblems(String name, String text) {
        String visible = LINK_TARGET.matcher(text).replaceAll("]()");
        List<String> problems = new ArrayList<>();
        String[] lines = visible.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            for (Map.Entry<String, Pattern> rule : Map.of(
                            "commit hash", HASH,
                            "issue number", ISSUE,
                            "session/team words", SESSION,
                            "path outside the repository", OUTSIDE)
                    .entrySet()) {
                Matcher m = rule.getValue().matcher(lines[i]);
                while (m.find()) {
                    problems.add(name + ":" + (i + 1) + ": " + rule.getKey() + " '" + m.group() + "'");
                }
            }
        }
        return problems;
    }

    static List<String> linkProblems(Path root, Path page) {
        String text = withoutCode(read(page));
        List<String> problems = new ArrayList<>();
        Matcher m = LINK.matcher(text);
        while (m.find()) {
            String target = m.group(1);
            if (target.isEmpty() || target.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*")) {
                continue;
            }
            int hash = target.indexOf('#');
            String file = hash < 0 ? target : target.substring(0, hash);
            String anchor = hash < 0 ? null : target.substring(hash + 1);
            Path resolved =
                    file.isEmpty() ? page : page.getParent().resolve(file).normalize();
            String where = root.relativize(page) + ": link '" + target + "'";
            if (!resolved.startsWith(root)) {
                problems.add(where + " leaves the repository");
            } else if (!Files.exists(resolved)) {
                problems.add(where + " names a missing file");
            } else if (anchor != null && !anchor.isEmpty()) {
                if (!resolved.toString().endsWith(".md")
                        || !anchors(read(resolved)).contains(anchor)) {
                    problems.add(where + " names a missing anchor");
                }
            }
        }
        return problems;
    }

    static Set<String> anchors(String markdown) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        String text = FENCE.matcher(markdown).replaceAll("");
        Matcher h = HEADING.matcher(text);
        while (h.find()) {
            String slug = slug(h.group(1));
            int n = seen.merge(slug, 1, Integer::sum) - 1;
            anchors.add(n == 0 ? slug : slug + "-" + n);
        }
        Matcher a = HTML_ANCHOR.matcher(markdown);
        while (a.find()) {
            anchors.add(a.group(1));
        }
        return anchors;
    }

    static String slug(String heading) {
        String plain = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replace("`", "");
        return plain.toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N}\\s_-]", "")
                .replace(' ', '-');
    }

    static List<String> figureProblems(Path root, Path page) {
        List<String> problems = new ArrayList<>();
        String[] lines = read(page).split("\n", -1);
        int sectionStart = 0;
        boolean inFence = false;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.strip().startsWith("```")) {
                inFence = !inFence;
                continue;
            }
            if (inFence) {
                continue;
            }
            if (line.startsWith("#")) {
                sectionStart = i;
                continue;
            }
            if (!line.startsWith("|") || i + 1 >= lines.length || !lines[i + 1].matches("^\\|[\\s:|-]+\\|?\\s*$")) {
                continue;
            }
            int end = i + 2;
            while (end < lines.length && lines[end].startsWith("|")) {
                end++;
            }
            String section = String.join("\n", Arrays.asList(lines).subList(sectionStart, end));
            Set<Path> raws = new LinkedHashSet<>();
            Matcher link = LINK.matcher(section);
            while (link.find()) {
                String target = link.group(1).replaceAll("#.*", "");
                Path resolved = page.getParent().resolve(target).normalize();
                if (resolved.startsWith(root.resolve("hedge-benchmarks/results")) && Files.isRegularFile(resolved)) {
                    raws.add(resolved);
                }
            }
            String where = root.relativize(page) + ":" + (i + 1);
            boolean hasFigures = false;
            for (int r = i + 2; r < end; r++) {
                hasFigures |= !figures(lines[r]).isEmpty();
            }
            if (!hasFigures) {
                i = end - 1;
                continue;
            }
            if (raws.isEmpty()) {
                problems.add(where + ": table links no raw output under hedge-benchmarks/results/");
            } else {
                double[] numbers = rawNumbers(raws);
                for (int r = i + 2; r < end; r++) {
                    for (String figure : figures(lines[r])) {
                        if (!found(figure, numbers)) {
                            problems.add(where + ": row " + (r + 1) + ": '" + figure + "' not in " + names(root, raws));
                        }
                    }
                }
            }
            i = end - 1;
        }
        return problems;
    }

    /** The figures of one table row: numbers outside the first cell and outside code spans. */
    static List<String> figures(String row) {
        String[] cells = row.strip().replaceAll("^\\|", "").split("\\|", -1);
        List<String> figures = new ArrayList<>();
        for (int c = 1; c < cells.length; c++) {
            Matcher m = DOC_NUMBER.matcher(CODE_SPAN.matcher(cells[c]).replaceAll(" "));
            while (m.find()) {
                figures.add(m.group().strip());
            }
        }
        return figures;
    }

    static boolean found(String figure, double[] sortedRaw) {
        Matcher m = DOC_NUMBER.matcher(figure);
        if (!m.matches()) {
            return false;
        }
        int decimals = m.group(2) == null ? 0 : m.group(2).length();
        double value = Double.parseDouble(m.group(1).replace(",", "") + (decimals > 0 ? "." + m.group(2) : ""));
        double tolerance = 0.5 * Math.pow(10, -decimals) + 1e-9;
        if (within(sortedRaw, value, tolerance)) {
            return true;
        }
        return m.group(3) != null && within(sortedRaw, value / 100, tolerance / 100);
    }

    private static boolean within(double[] sorted, double value, double tolerance) {
        int at = Arrays.binarySearch(sorted, value - tolerance);
        int from = at >= 0 ? at : -at - 1;
        return from < sorted.length && sorted[from] <= value + tolerance;
    }

    private static double[] rawNumbers(Set<Path> raws) {
        List<Double> all = new ArrayList<>();
        for (Path raw : raws) {
            Matcher m = RAW_NUMBER.matcher(read(raw));
            while (m.find()) {
                all.add(Double.parseDouble(m.group()));
            }
        }
        return all.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    }

    private static String names(Path root, Set<Path> raws) {
        return raws.stream().map(p -> root.relativize(p).toString()).toList().toString();
    }

    private static String withoutCode(String markdown) {
        return CODE_SPAN.matcher(FENCE.matcher(markdown).replaceAll("")).replaceAll("");
    }

    private static String read(Path path) {
        try {
            return Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.github.hedge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Debian's chromium, headless, with the flags a closed network needs. */
final class Chromium {
    static final String INSTALL_HINT =
            "chromium is not installed, so the headless-browser check of the HTML report is skipped;"
                    + " install it with `apt-get install -y chromium` (Debian/Ubuntu) or set CHROMIUM=/path/to/chromium";

    private Chromium() {}

    static Path binary() {
        String env = System.getenv("CHROMIUM");
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        for (String candidate : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return Path.of(candidate);
            }
        }
        return null;
    }

    /**
     * Skips the calling test where chromium is missing, with the hint on stderr; fails it instead
     * when the environment variable {@code CI} is {@code true}, so CI never skips the check.
     */
    static void assumeInstalled() {
        Path b = binary();
        boolean installed = b != null && Files.isExecutable(b);
        if (!installed && "true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new AssertionError("CI=true and chromium is missing: " + INSTALL_HINT);
        }
        if (!installed) {
            System.err.println(INSTALL_HINT);
        }
        assumeTrue(installed, INSTALL_HINT);
    }

    /** @return the DOM after the page's scripts ran */
    static String dumpDom(Path html, Path profile) throws IOException, InterruptedException {
        Files.createDirectories(profile);
        List<String> cmd = new ArrayList<>(List.of(
                binary().toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--user-data-dir=" + profile.toAbsolutePath(),
                "--window-size=1200,1600",
                "--virtual-time-budget=5000",
                "--dump-dom",
                html.toUri().toString()));
        Path stdout = Files.createTempFile(profile.getParent(), "dom", ".html");
        Path stderr = Files.createTempFile(profile.getParent(), "chromium", ".log");
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile())
                .start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("chromium did not finish within 120 s: " + Files.readString(stderr));
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("chromium exited with " + p.exitValue() + ": " + Files.readString(stderr));
        }
        return Files.readString(stdout, StandardCharsets.UTF_8);
    }

    /**
     * Renders the demo's report and checks that both charts drew every phase.
     *
     * @param phases datasets each chart must have
     */
    static void assertChartsDrawn(Path report, Path profile, int phases) throws IOException, InterruptedException {
        String dom = dumpDom(report, profile);
        Matcher m = Pattern.compile("render-check (\\{[^<]*})").matcher(dom);
        assertThat(m.find())
                .as("the page's render check ran; DOM was:%n%s", tail(dom))
                .isTrue();
        String check = m.group(1);
        assertThat(ints(check, "datasets")).as(check).containsExactly(phases, phases);
        assertThat(ints(check, "charts")).as(check).containsExactly(2);
        for (int points : ints(check, "points")) {
            assertThat(points).as("points per chart in %s", check).isGreaterThan(10);
        }
        for (int painted : ints(check, "painted")) {
            // an empty canvas paints nothing; axes alone paint a few thousand pixels, data more
            assertThat(painted).as("painted pixels per chart in %s", check).isGreaterThan(5_000);
        }
    }

    private static List<Integer> ints(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\":(\\[[^\\]]*]|\\d+)").matcher(json);
        assertThat(m.find()).as("%s in %s", key, json).isTrue();
        List<Integer> out = new ArrayList<>();
        Matcher d = Pattern.compile("\\d+").matcher(m.group(1));
        while (d.find()) {
            out.add(Integer.parseInt(d.group()));
        }
        return out;
    }

    private static String tail(String s) {
        return s.length() > 2000 ? s.substring(s.length() - 2000) : s;
    }
}

package io.github.hedge.examples.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Writes the demo's report: one self-contained HTML file with the side-by-side table, a
 * latency-percentile plot and latency over time, drawn by Chart.js. Chart.js comes from its Maven
 * Central webjar and is inlined, so the file opens offline and fetches nothing. After drawing, the
 * page writes what it drew (charts, points, painted pixels) into {@code <output id="render-check">},
 * which the headless-browser test reads. Stateless.
 */
public final class HtmlReport {
    /** Points per series in the latency-over-time plot; longer runs are thinned evenly. */
    static final int MAX_POINTS = 20_000;

    private static final String[] COLORS = {"#7f7f7f", "#1f77b4", "#d62728", "#2ca02c", "#9467bd"};

    private HtmlReport() {}

    /** @return the Chart.js version bundled in the report */
    public static String chartJsVersion() {
        try (InputStream in = resource("META-INF/maven/org.webjars.npm/chart.js/pom.properties")) {
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String chartJs() {
        String path = "META-INF/resources/webjars/chart.js/" + chartJsVersion() + "/dist/chart.umd.js";
        try (InputStream in = resource(path)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static InputStream resource(String path) throws IOException {
        InputStream in = HtmlReport.class.getClassLoader().getResourceAsStream(path);
        if (in == null) {
            throw new IOException(path + " is not on the class path (the org.webjars.npm:chart.js jar)");
        }
        return in;
    }

    /**
     * @param file where to write (parent directories are created)
     * @param title the page's heading
     * @param setup what ran, one line per item, shown above the table
     * @param phases the phases, in the table's order
     * @throws IOException if the file cannot be written
     */
    public static void write(Path file, String title, List<String> setup, List<PhaseResult> phases) throws IOException {
        StringBuilder h = new StringBuilder(400_000);
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
                .append(esc(title))
                .append("</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
                        + "table{border-collapse:collapse}td,th{padding:.3em .8em;text-align:right;border-bottom:1px solid #ddd}"
                        + "td:first-child,th:first-child{text-align:left}.chart{position:relative;height:420px;margin:1em 0 2em}"
                        + "output{display:block;color:#888;font-size:small}</style>\n</head><body>\n<h1>")
                .append(esc(title))
                .append("</h1>\n<ul>\n");
        for (String line : setup) {
            h.append("<li>").append(esc(line)).append("</li>\n");
        }
        h.append("</ul>\n<table id=\"summary\">\n<tr><th></th><th>calls</th><th>p50</th><th>p90</th><th>p99</th>"
                + "<th>p99.9</th><th>max</th><th>extra load</th><th>hedges won</th><th>errors</th></tr>\n");
        for (PhaseResult r : phases) {
            h.append("<tr><td>")
                    .append(esc(r.label()))
                    .append("</td><td>")
                    .append(r.calls())
                    .append("</td>");
            for (double p : new double[] {0.5, 0.9, 0.99, 0.999}) {
                h.append("<td>").append(ms(r.percentileMillis(p))).append("</td>");
            }
            h.append("<td>")
                    .append(ms(r.maxMillis()))
                    .append("</td><td>")
                    .append(String.format(Locale.ROOT, "%.1f%%", 100 * r.extraLoad()))
                    .append("</td><td>")
                    .append(r.hedgesWon())
                    .append("</td><td>")
                    .append(r.errors())
                    .append("</td></tr>\n");
        }
        h.append("</table>\n<h2>Latency by percentile</h2>\n<p>Each curve is one phase; the x axis counts nines "
                + "(1 = p90, 2 = p99, 3 = p99.9), the y axis is logarithmic.</p>\n"
                + "<div class=\"chart\"><canvas id=\"percentiles\"></canvas></div>\n"
                + "<h2>Latency over time</h2>\n<p>Every call of each phase, by when it started in its phase.</p>\n"
                + "<div class=\"chart\"><canvas id=\"timeline\"></canvas></div>\n"
                + "<output id=\"render-check\">not rendered</output>\n");
        h.append("<script>\n")
                .append(chartJs().replace("</script", "<\\/script"))
                .append("\n</script>\n");
        h.append("<script>\nconst phases = [\n");
        for (int k = 0; k < phases.size(); k++) {
            PhaseResult r = phases.get(k);
            h.append("{label:\"")
                    .append(js(r.label()))
                    .append("\",color:\"")
                    .append(COLORS[k % COLORS.length])
                    .append("\",percentiles:[");
            appendPercentiles(h, r);
            h.append("],timeline:[");
            appendTimeline(h, r);
            h.append("]},\n");
        }
        h.append("];\n").append(SCRIPT).append("</script>\n</body></html>\n");
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, h, StandardCharsets.UTF_8);
    }

    private static void appendPercentiles(StringBuilder h, PhaseResult r) {
        if (r.successes() == 0) {
            return;
        }
        // x = nines: p = 1 - 10^-x, up to the deepest percentile the sample supports
        double maxNines = Math.log10(r.successes());
        for (double x = 0; x <= maxNines + 1e-9; x += 0.05) {
            double p = 1 - Math.pow(10, -x);
            h.append(String.format(Locale.ROOT, "{x:%.2f,y:%.3f},", x, r.percentileMillis(p)));
        }
        h.append(String.format(Locale.ROOT, "{x:%.2f,y:%.3f}", maxNines, r.maxMillis()));
    }

    private static void appendTimeline(StringBuilder h, PhaseResult r) {
        int n = r.calls();
        int stride = Math.max(1, (n + MAX_POINTS - 1) / MAX_POINTS);
        boolean first = true;
        for (int i = 0; i < n; i += stride) {
            if (!r.ok(i)) {
                continue;
            }
            if (!first) {
                h.append(',');
            }
            first = false;
            h.append(String.format(Locale.ROOT, "{x:%.3f,y:%.3f}", r.startNanos(i) / 1e9, r.latencyNanos(i) / 1e6));
        }
    }

    static String ms(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        return String.format(Locale.ROOT, v < 100 ? "%.1f ms" : "%.0f ms", v);
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static String js(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("<", "\\u003c");
    }

    private static final String SCRIPT =
            """
            const logY = {type:'logarithmic',title:{display:true,text:'latency (ms)'}};
            const common = {animation:false,responsive:true,maintainAspectRatio:false,parsing:false,
              plugins:{legend:{position:'top'}}};
            const nines = {0:'p0',1:'p90',2:'p99',3:'p99.9',4:'p99.99',5:'p99.999'};
            const charts = [
              new Chart(document.getElementById('percentiles'), {type:'line',
                data:{datasets:phases.map(p => ({label:p.label,data:p.percentiles,borderColor:p.color,
                  backgroundColor:p.color,pointRadius:0,borderWidth:2}))},
                options:{...common,scales:{x:{type:'linear',min:0,
                  title:{display:true,text:'percentile'},
                  ticks:{stepSize:1,callback:v => nines[v] ?? ''}},y:logY}}}),
              new Chart(document.getElementById('timeline'), {type:'scatter',
                data:{datasets:phases.map(p => ({label:p.label,data:p.timeline,borderColor:p.color+'99',
                  backgroundColor:p.color+'99',pointRadius:1.5}))},
                options:{...common,scales:{x:{type:'linear',min:0,title:{display:true,text:'seconds into the phase'}},
                  y:logY}}})
            ];
            function renderCheck() {
              const painted = charts.map(c => {
                const ctx = c.canvas.getContext('2d');
                const d = ctx.getImageData(0, 0, c.canvas.width, c.canvas.height).data;
                let n = 0;
                for (let i = 3; i < d.length; i += 4) { if (d[i] !== 0) n++; }
                return n;
              });
              const check = {charts: charts.length,
                datasets: charts.map(c => c.data.datasets.length),
                points: charts.map(c => c.data.datasets.reduce((s, d) => s + d.data.length, 0)),
                painted: painted,
                size: charts.map(c => [c.canvas.width, c.canvas.height])};
              document.getElementById('render-check').textContent = 'render-check ' + JSON.stringify(check);
            }
            renderCheck();
            window.addEventListener('load', renderCheck);
            """;
}

package io.github.hedge.benchmarks.charts;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Draws the charts of docs/benchmarks.md as plain SVG from the committed raw results under
 * {@code hedge-benchmarks/results/}, so a chart always shows what its raw file says.
 *
 * <ul>
 *   <li>{@value #SWEEP_CHART}: hedged p99, p99.9 and p99.99 divided by the oracle's (the best any
 *       delay-based hedge can do at the budget), per latency distribution and budget, from
 *       {@value #SWEEP_RAW}.
 *   <li>{@value #TRANSIENT_CHART}: a new executor's p99 and p99.9 over its first 200 and 1,000
 *       calls, divided by those of the best fixed delay chosen in hindsight, per service and
 *       request rate, from {@value #TRANSIENT_RAW}.
 *   <li>{@value #SHIFT_CHART}: extra load per second (over the budget) and the delay (over the
 *       healthy p95) while one replica of three is 5x or 10x slower, from {@link #SHIFT_RAWS}.
 * </ul>
 *
 * <p>The output is deterministic: the same raw files give the same bytes (fixed number formats,
 * {@link Locale#ROOT}, no timestamp). {@code BenchmarkChartsTest} fails when a committed chart
 * differs from its rendering and rewrites it with {@code -Dhedge.docs.update=true}; {@link #main}
 * writes them too. Stateless; thread-safe.
 */
public final class BenchmarkCharts {
    /** The sweep's raw output the tail chart is drawn from, relative to the repository root. */
    public static final String SWEEP_RAW = "hedge-benchmarks/results/sweep-seed1-2026-11-29.jsonl";
    /** The cold-start grid's raw output, relative to the repository root. */
    public static final String TRANSIENT_RAW = "hedge-benchmarks/results/transient-200seeds-2026-11-29.jsonl";
    /** The shift runs' raw output (5x at 5%, 10x at 5%, 1% and 10%), relative to the repository root. */
    public static final List<String> SHIFT_RAWS = List.of(
            "hedge-benchmarks/results/shift-5x-lower-bound-2026-11-28.json",
            "hedge-benchmarks/results/shift-lower-bound-2026-11-28.json",
            "hedge-benchmarks/results/shift-b0.01-10x-lower-bound-2026-11-28.json",
            "hedge-benchmarks/results/shift-b0.1-10x-lower-bound-2026-11-28.json");
    /** Where the tail chart goes, relative to the repository root. */
    public static final String SWEEP_CHART = "docs/img/benchmarks/sweep-vs-oracle.svg";
    /** Where the cold-start chart goes, relative to the repository root. */
    public static final String TRANSIENT_CHART = "docs/img/benchmarks/transient-grid.svg";
    /** Where the shift chart goes, relative to the repository root. */
    public static final String SHIFT_CHART = "docs/img/benchmarks/shift.svg";

    private static final String FONT = "font-family=\"Helvetica, Arial, sans-serif\"";
    private static final String[] PERCENTILES = {"p99", "p999", "p9999"};
    private static final String[] PERCENTILE_NAMES = {"p99", "p99.9", "p99.99"};
    private static final String[] COLOURS = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"};
    /** A cold-start cell passes at or below this ratio (the target of docs/benchmarks.md). */
    private static final double TRANSIENT_TARGET = 1.10;

    private BenchmarkCharts() {}

    /**
     * Writes every chart under {@code args[0]} (the repository root; default: the working directory).
     *
     * @param args the repository root, optional
     * @throws IOException if a raw file cannot be read or a chart written
     */
    public static void main(String[] args) throws IOException {
        Path root = Path.of(args.length > 0 ? args[0] : ".");
        for (Map.Entry<String, String> chart : render(root).entrySet()) {
            Path file = root.resolve(chart.getKey());
            Files.createDirectories(file.getParent());
            Files.writeString(file, chart.getValue(), StandardCharsets.UTF_8);
            System.out.println("wrote " + chart.getKey());
        }
    }

    /**
     * Renders every chart from the raw files under {@code root}.
     *
     * @param root the repository root
     * @return each chart's path relative to {@code root}, mapped to its SVG text, in a fixed order
     * @throws IOException if a raw file cannot be read
     */
    public static Map<String, String> render(Path root) throws IOException {
        Map<String, String> charts = new LinkedHashMap<>();
        charts.put(SWEEP_CHART, sweepChart(read(root.resolve(SWEEP_RAW))));
        charts.put(TRANSIENT_CHART, transientChart(read(root.resolve(TRANSIENT_RAW))));
        List<String> shifts = new ArrayList<>();
        for (String raw : SHIFT_RAWS) {
            shifts.add(read(root.resolve(raw)));
        }
        charts.put(SHIFT_CHART, shiftChart(shifts));
        return charts;
    }

    /**
     * The tail chart: one row per distribution, one panel per budget, a marker per percentile at
     * hedged / oracle.
     *
     * @param jsonl the sweep's raw output, one JSON object per cell ({@code "scenario":"sweep"})
     * @return the SVG text
     */
    static String sweepChart(String jsonl) {
        List<String> dists = new ArrayList<>();
        List<Double> budgets = new ArrayList<>();
        Map<String, double[]> ratios = new LinkedHashMap<>();
        double lowest = 1;
        double highest = 1;
        for (Map<String, Object> cell : objects(jsonl, "sweep")) {
            String dist = string(cell, "dist");
            double budget = number(cell, "budget");
            if (!dists.contains(dist)) {
                dists.add(dist);
            }
            if (!budgets.contains(budget)) {
                budgets.add(budget);
            }
            double[] r = new double[PERCENTILES.length];
            for (int p = 0; p < r.length; p++) {
                r[p] = number(object(cell, "hedged"), PERCENTILES[p]) / number(object(cell, "oracle"), PERCENTILES[p]);
                lowest = Math.min(lowest, r[p]);
                highest = Math.max(highest, r[p]);
            }
            ratios.put(dist + "|" + budget, r);
        }
        if (ratios.isEmpty()) {
            throw new IllegalArgumentException("the sweep output holds no cell");
        }
        budgets.sort(Double::compare);
        double lo = Math.floor(lowest * 20 - 1e-9) / 20;
        double hi = Math.ceil(highest * 20 + 1e-9) / 20;

        int left = 210;
        int panel = 180;
        int gap = 32;
        int top = 92;
        int row = 22;
        int width = left + budgets.size() * (panel + gap) + 6;
        int plotBottom = top + dists.size() * row;
        int height = plotBottom + 58;
        StringBuilder svg = header(
                width,
                height,
                "Hedged tail latency against the oracle",
                "Hedged p99, p99.9 and p99.99 divided by the oracle's, per latency distribution and budget; from "
                        + SWEEP_RAW);
        text(svg, 12, 22, 15, "start", "bold", "Hedged latency / best possible (oracle), by budget");
        text(
                svg,
                12,
                40,
                12,
                "start",
                "",
                "Simulator, seed 1, 500,000 to 1,000,000 calls per cell; 1.00 = as good as the oracle");
        for (int p = 0; p < PERCENTILES.length; p++) {
            int x = left + p * 90;
            marker(svg, p, x, 58, null);
            text(svg, x + 9, 62, 12, "start", "", PERCENTILE_NAMES[p]);
        }
        for (int d = 0; d < dists.size(); d++) {
            int y = top + d * row;
            if (d % 2 == 0) {
                svg.append(String.format(
                        Locale.ROOT,
                        "<rect x=\"12\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f3f3f3\"/>%n",
                        y,
                        width - 18,
                        row));
            }
            text(svg, left - 10, y + 15, 12, "end", "", dists.get(d));
        }
        for (int b = 0; b < budgets.size(); b++) {
            int x0 = left + b * (panel + gap);
            text(svg, x0 + panel / 2.0, top - 10, 13, "middle", "bold", "budget " + percent(budgets.get(b)));
            for (int k = 0; lo + k * 0.05 <= hi + 1e-9; k++) {
                double tick = lo + k * 0.05;
                double x = x0 + (tick - lo) / (hi - lo) * panel;
                boolean one = Math.abs(tick - 1) < 1e-9;
                svg.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%s\"/>%n",
                        x,
                        top,
                        x,
                        plotBottom,
                        one ? "#555555" : "#cccccc",
                        one ? "1.5" : "1"));
                text(svg, x, plotBottom + 16, 11, "middle", "", String.format(Locale.ROOT, "%.2f", tick));
            }
            for (int d = 0; d < dists.size(); d++) {
                double[] r = ratios.get(dists.get(d) + "|" + budgets.get(b));
                if (r == null) {
                    continue;
                }
                for (int p = 0; p < r.length; p++) {
                    double x = x0 + (r[p] - lo) / (hi - lo) * panel;
                    double y = top + d * row + row / 2.0 + (p - 1) * 4;
                    marker(
                            svg,
                            p,
                            x,
                            y,
                            String.format(
                                    Locale.ROOT,
                                    "%s, budget %s: %s %.4fx",
                                    dists.get(d),
                                    percent(budgets.get(b)),
                                    PERCENTILE_NAMES[p],
                                    r[p]));
                }
            }
        }
        text(
                svg,
                left + (budgets.size() * (panel + gap) - gap) / 2.0,
                plotBottom + 38,
                12,
                "middle",
                "",
                "hedged / oracle (lower is better; the oracle is the best any delay-based hedge can do)");
        return svg.append("</svg>\n").toString();
    }

    /**
     * The cold-start chart: two heat maps (p99 and p99.9), one row per service, one column per
     * request rate and number of calls, each cell hedged / hindsight fixed delay.
     *
     * @param jsonl the cold-start grid's raw output, one JSON object per cell ({@code "scenario":"transient"})
     * @return the SVG text
     */
    static String transientChart(String jsonl) {
        List<String> services = new ArrayList<>();
        Map<String, String> labels = new LinkedHashMap<>();
        List<Double> rates = new ArrayList<>();
        List<Double> calls = new ArrayList<>();
        Map<String, double[]> cells = new LinkedHashMap<>();
        for (Map<String, Object> cell : objects(jsonl, "transient")) {
            String service = string(cell, "service");
            double rate = number(cell, "rate");
            double n = number(cell, "calls");
            if (!services.contains(service)) {
                services.add(service);
                labels.put(service, serviceLabel(cell));
            }
            if (!rates.contains(rate)) {
                rates.add(rate);
            }
            if (!calls.contains(n)) {
                calls.add(n);
            }
            cells.put(
                    service + "|" + rate + "|" + n,
                    new double[] {number(cell, "hedged_p99_over_fixed"), number(cell, "hedged_p999_over_fixed")});
        }
        if (cells.isEmpty()) {
            throw new IllegalArgumentException("the cold-start output holds no cell");
        }
        rates.sort(Double::compare);
        calls.sort(Double::compare);
        int passing = 0;
        for (double[] c : cells.values()) {
            passing += c[0] <= TRANSIENT_TARGET && c[1] <= TRANSIENT_TARGET ? 1 : 0;
        }

        int left = 262;
        int column = 46;
        int gap = 26;
        int top = 116;
        int row = 21;
        int columns = rates.size() * calls.size();
        int mapWidth = columns * column;
        int width = left + 2 * mapWidth + gap + 12;
        int bottom = top + services.size() * row;
        int height = bottom + 52;
        StringBuilder svg = header(
                width,
                height,
                "A new executor against the best fixed delay chosen in hindsight",
                "p99 and p99.9 of hedged over hindsight fixed delay, per service, rate and number of calls; from "
                        + TRANSIENT_RAW);
        text(svg, 12, 22, 15, "start", "bold", "A new executor: hedged / best fixed delay in hindsight");
        text(
                svg,
                12,
                40,
                12,
                "start",
                "",
                String.format(
                        Locale.ROOT,
                        "maxExtraLoad(0.05), the first N calls pooled over 200 seeds; green: within %.2fx (%d of %d cells pass both)",
                        TRANSIENT_TARGET,
                        passing,
                        cells.size()));
        for (int s = 0; s < services.size(); s++) {
            text(svg, left - 10, top + s * row + 15, 12, "end", "", labels.get(services.get(s)));
        }
        String[] titles = {"p99", "p99.9"};
        for (int m = 0; m < 2; m++) {
            int x0 = left + m * (mapWidth + gap);
            text(svg, x0 + mapWidth / 2.0, 66, 13, "middle", "bold", titles[m] + " / fixed");
            for (int r = 0; r < rates.size(); r++) {
                double xr = x0 + r * calls.size() * column;
                text(
                        svg,
                        xr + calls.size() * column / 2.0,
                        86,
                        11,
                        "middle",
                        "",
                        String.format(
                                Locale.ROOT, "%,d call%s/s", Math.round(rates.get(r)), rates.get(r) == 1 ? "" : "s"));
                for (int c = 0; c < calls.size(); c++) {
                    double x = xr + c * column;
                    text(
                            svg,
                            x + column / 2.0,
                            top - 8,
                            10,
                            "middle",
                            "",
                            String.format(Locale.ROOT, "N=%,d", Math.round(calls.get(c))));
                    for (int s = 0; s < services.size(); s++) {
                        double[] v = cells.get(services.get(s) + "|" + rates.get(r) + "|" + calls.get(c));
                        double y = top + s * row;
                        if (v == null) {
                            continue;
                        }
                        double ratio = v[m];
                        svg.append(String.format(
                                Locale.ROOT,
                                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#ffffff\">"
                                        + "<title>%s, %,d calls/s, first %,d calls: %s %.4fx</title></rect>%n",
                                x,
                                y,
                                column,
                                row,
                                colour(ratio),
                                escape(labels.get(services.get(s))),
                                Math.round(rates.get(r)),
                                Math.round(calls.get(c)),
                                titles[m],
                                ratio));
                        text(
                                svg,
                                x + column / 2.0,
                                y + 15,
                                11,
                                "middle",
                                "",
                                String.format(Locale.ROOT, "%.2f", ratio),
                                ratio > 2.2 ? "#ffffff" : "#000000");
                    }
                }
            }
        }
        text(
                svg,
                left + mapWidth + gap / 2.0,
                bottom + 30,
                12,
                "middle",
                "",
                "each cell: the new executor's percentile divided by the best fixed delay's at the same extra load");
        return svg.append("</svg>\n").toString();
    }

    /**
     * The shift chart: two panels over time, extra load per second divided by the budget and the
     * delay divided by the healthy p95, one line per run, the slowdown shaded.
     *
     * @param runs each run's raw output, one JSON object ({@code "scenario":"shift"})
     * @return the SVG text
     */
    static String shiftChart(List<String> runs) {
        List<Map<String, Object>> shifts = new ArrayList<>();
        for (String run : runs) {
            shifts.addAll(objects(run, "shift"));
        }
        if (shifts.isEmpty()) {
            throw new IllegalArgumentException("the shift output holds no run");
        }
        double end = 0;
        double highestLoad = 1;
        double highestDelay = 2;
        List<String> names = new ArrayList<>();
        List<double[][]> loads = new ArrayList<>();
        List<double[][]> delays = new ArrayList<>();
        for (Map<String, Object> run : shifts) {
            double budget = number(run, "budget");
            double p95 = number(run, "healthy_p95_ms");
            names.add(
                    String.format(Locale.ROOT, "%.0fx slower, budget %s", number(run, "slow_factor"), percent(budget)));
            double[][] load = series(run, "extra_load_per_second", "extra_load", budget);
            double[][] delay = series(run, "delay_over_time", "delay_ms", p95);
            for (double[] point : load) {
                end = Math.max(end, point[0]);
                highestLoad = Math.max(highestLoad, point[1]);
            }
            for (double[] point : delay) {
                highestDelay = Math.max(highestDelay, point[1]);
            }
            loads.add(load);
            delays.add(delay);
        }
        double loadTop = Math.ceil(highestLoad);
        double delayTop = Math.ceil(highestDelay);
        double from = number(shifts.get(0), "slow_from_s");
        double to = number(shifts.get(0), "slow_to_s");

        int left = 70;
        int plotWidth = 760;
        int width = left + plotWidth + 200;
        int top1 = 70;
        int plotHeight = 150;
        int top2 = top1 + plotHeight + 60;
        int height = top2 + plotHeight + 50;
        StringBuilder svg = header(
                width,
                height,
                "One replica of three slows down",
                "Extra load per second over the budget, and the delay over the healthy p95, while one replica is 5x or 10x slower; from "
                        + String.join(", ", SHIFT_RAWS));
        text(svg, 12, 22, 15, "start", "bold", "One replica of three slows down (shaded): extra load and delay");
        text(
                svg,
                12,
                40,
                12,
                "start",
                "",
                String.format(
                        Locale.ROOT,
                        "Simulator, lognormal:0,1 at 1,000 calls/s, seed 1; one replica slower from %.0f s to %.0f s",
                        from,
                        to));
        linePanel(svg, left, top1, plotWidth, plotHeight, end, 0, loadTop, 1, from, to, loads, "extra load / budget");
        linePanel(
                svg,
                left,
                top2,
                plotWidth,
                plotHeight,
                end,
                0,
                delayTop,
                delayTop > 2 ? 1 : 0.5,
                from,
                to,
                delays,
                "delay / healthy p95");
        text(svg, left + plotWidth / 2.0, height - 12, 12, "middle", "", "time (s)");
        for (int r = 0; r < names.size(); r++) {
            int y = top1 + 10 + r * 20;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>%n",
                    left + plotWidth + 16,
                    y - 4,
                    left + plotWidth + 36,
                    y - 4,
                    COLOURS[r % COLOURS.length]));
            text(svg, left + plotWidth + 42, y, 12, "start", "", names.get(r));
        }
        return svg.append("</svg>\n").toString();
    }

    private static void linePanel(
            StringBuilder svg,
            int x0,
            int y0,
            int w,
            int h,
            double xMax,
            double yMin,
            double yMax,
            double yStep,
            double shadeFrom,
            double shadeTo,
            List<double[][]> lines,
            String label) {
        svg.append(String.format(
                Locale.ROOT,
                "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#eeeeee\"/>%n",
                x0 + shadeFrom / xMax * w,
                y0,
                (shadeTo - shadeFrom) / xMax * w,
                h));
        for (int k = 0; yMin + k * yStep <= yMax + 1e-9; k++) {
            double v = yMin + k * yStep;
            double y = y0 + h - (v - yMin) / (yMax - yMin) * h;
            boolean one = Math.abs(v - 1) < 1e-9;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"/>%n",
                    x0,
                    y,
                    x0 + w,
                    y,
                    one ? "#555555" : "#cccccc",
                    one ? "1.5" : "1"));
            text(svg, x0 - 6, y + 4, 11, "end", "", String.format(Locale.ROOT, "%.1f", v));
        }
        for (int k = 0; k * 30 <= xMax + 1e-9; k++) {
            double x = x0 + k * 30 / xMax * w;
            text(svg, x, y0 + h + 16, 11, "middle", "", Integer.toString(k * 30));
        }
        text(svg, x0, y0 - 8, 12, "start", "bold", label);
        for (int r = 0; r < lines.size(); r++) {
            StringBuilder points = new StringBuilder();
            for (double[] p : lines.get(r)) {
                double y = Math.max(yMin, Math.min(yMax, p[1]));
                points.append(String.format(
                        Locale.ROOT, "%.1f,%.1f ", x0 + p[0] / xMax * w, y0 + h - (y - yMin) / (yMax - yMin) * h));
            }
            svg.append(String.format(
                    Locale.ROOT,
                    "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" stroke-opacity=\"0.85\"/>%n",
                    points.toString().strip(),
                    COLOURS[r % COLOURS.length]));
        }
    }

    /** The {@code (t_s, value / divisor)} points of a run's time series. */
    private static double[][] series(Map<String, Object> run, String name, String value, double divisor) {
        if (!(run.get(name) instanceof List<?> list)) {
            throw new IllegalArgumentException("a run has no list '" + name + "'");
        }
        double[][] points = new double[list.size()][];
        for (int i = 0; i < points.length; i++) {
            @SuppressWarnings("unchecked")
            Map<String, Object> point = (Map<String, Object>) list.get(i);
            points[i] = new double[] {number(point, "t_s"), number(point, value) / divisor};
        }
        return points;
    }

    private static String serviceLabel(Map<String, Object> cell) {
        Object stall = cell.get("stall");
        if (stall instanceof Map<?, ?> s) {
            return String.format(
                    Locale.ROOT,
                    "1 replica of 3 stalls %.0f%%, %.0f-%.0f ms",
                    100 * ((Double) s.get("share")),
                    (Double) s.get("min_ms"),
                    (Double) s.get("max_ms"));
        }
        return string(cell, "dist");
    }

    /** Green up to the target, then from pale orange to dark red at 3.2x and beyond (log scale). */
    private static String colour(double ratio) {
        if (ratio <= TRANSIENT_TARGET) {
            return ratio < 1 ? "#a1d99b" : "#c7e9c0";
        }
        double t = Math.min(1, StrictMath.log(ratio / TRANSIENT_TARGET) / StrictMath.log(3.2 / TRANSIENT_TARGET));
        int[] from = {0xfe, 0xe8, 0xc8};
        int[] to = {0xb3, 0x00, 0x00};
        return String.format(
                Locale.ROOT,
                "#%02x%02x%02x",
                Math.round(from[0] + t * (to[0] - from[0])),
                Math.round(from[1] + t * (to[1] - from[1])),
                Math.round(from[2] + t * (to[2] - from[2])));
    }

    private static void marker(StringBuilder svg, int p, double x, double y, String title) {
        String tip = title == null ? "" : "<title>" + escape(title) + "</title>";
        String shape =
                switch (p) {
                    case 0 ->
                        String.format(
                                Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\">", x, y, COLOURS[p]);
                    case 1 ->
                        String.format(
                                Locale.ROOT,
                                "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\">",
                                x - 3.5,
                                y - 3.5,
                                COLOURS[p]);
                    default ->
                        String.format(
                                Locale.ROOT,
                                "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\">",
                                x,
                                y - 4.5,
                                x - 4.5,
                                y + 3.5,
                                x + 4.5,
                                y + 3.5,
                                COLOURS[p]);
                };
        String close = p == 0 ? "</circle>" : p == 1 ? "</rect>" : "</polygon>";
        svg.append(shape).append(tip).append(close).append('\n');
    }

    private static StringBuilder header(int width, int height, String title, String description) {
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" %s>%n",
                width,
                height,
                width,
                height,
                FONT));
        svg.append("<title>").append(escape(title)).append("</title>\n");
        svg.append("<desc>").append(escape(description)).append("</desc>\n");
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>%n", width, height));
        return svg;
    }

    private static void text(StringBuilder svg, double x, double y, int size, String anchor, String weight, String s) {
        text(svg, x, y, size, anchor, weight, s, "#000000");
    }

    private static void text(
            StringBuilder svg, double x, double y, int size, String anchor, String weight, String s, String fill) {
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s fill=\"%s\">%s</text>%n",
                x,
                y,
                size,
                anchor,
                weight.isEmpty() ? "" : " font-weight=\"" + weight + "\"",
                fill,
                escape(s)));
    }

    private static String percent(double fraction) {
        String s = String.format(Locale.ROOT, "%.4f", fraction * 100)
                .replaceAll("0+$", "")
                .replaceAll("\\.$", "");
        return s + "%";
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> objects(String jsonl, String scenario) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object value : JsonLines.parse(jsonl)) {
            if (value instanceof Map<?, ?> m && scenario.equals(m.get("scenario"))) {
                out.add((Map<String, Object>) m);
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Map<String, Object> cell, String name) {
        Object value = cell.get(name);
        if (!(value instanceof Map<?, ?>)) {
            throw new IllegalArgumentException("a cell has no object '" + name + "'");
        }
        return (Map<String, Object>) value;
    }

    private static double number(Map<String, Object> cell, String name) {
        if (!(cell.get(name) instanceof Double d)) {
            throw new IllegalArgumentException("a cell has no number '" + name + "'");
        }
        return d;
    }

    private static String string(Map<String, Object> cell, String name) {
        if (!(cell.get(name) instanceof String s)) {
            throw new IllegalArgumentException("a cell has no string '" + name + "'");
        }
        return s;
    }

    private static String read(Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8);
    }
}

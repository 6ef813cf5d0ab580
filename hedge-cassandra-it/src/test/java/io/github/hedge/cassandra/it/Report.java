package io.github.hedge.cassandra.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Writes what a fault's runs showed to {@code target/reliability}: a markdown table and a PNG with
 * throughput and p99 latency over time, one line per mode (XChart).
 */
final class Report {
    static final Path DIR = Path.of(System.getProperty("hedge.it.reportDir", "target/reliability"));

    private Report() {}

    static void write(String fault, String title, List<LoadRun> runs, String table) {
        try {
            Files.createDirectories(DIR);
            Files.writeString(DIR.resolve(fault + ".md"), table);
            for (LoadRun r : runs) {
                Files.writeString(
                        DIR.resolve(fault + "-" + r.mode.name().toLowerCase(java.util.Locale.ROOT) + ".csv"), r.csv());
                Files.writeString(
                        DIR.resolve(fault + "-" + r.mode.name().toLowerCase(java.util.Locale.ROOT) + "-hiccups.csv"),
                        r.hiccupsCsv());
                if (!r.slowCalls.isEmpty()) {
                    Files.write(
                            DIR.resolve(
                                    fault + "-" + r.mode.name().toLowerCase(java.util.Locale.ROOT) + "-slow-calls.txt"),
                            r.slowCalls);
                }
            }
            plot(DIR, fault, title, runs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void plot(Path dir, String fault, String title, List<LoadRun> runs) throws IOException {
        XYChart tput = new XYChartBuilder()
                .width(900)
                .height(320)
                .title(title + ": successful idempotent requests per second")
                .xAxisTitle("s")
                .yAxisTitle("requests/s")
                .build();
        XYChart lat = new XYChartBuilder()
                .width(900)
                .height(320)
                .title(title + ": p99 latency of the idempotent requests started each second")
                .xAxisTitle("s")
                .yAxisTitle("ms (log)")
                .build();
        lat.getStyler().setYAxisLogarithmic(true);
        for (LoadRun r : runs) {
            int[] t = r.throughputPerSecond();
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (int s = 0; s < t.length; s++) {
                x.add((double) s);
                y.add((double) t[s]);
            }
            XYSeries ts = tput.addSeries(r.mode.label, x, y);
            ts.setMarker(SeriesMarkers.NONE);
            double[] p = r.p99PerSecond();
            List<Double> lx = new ArrayList<>();
            List<Double> ly = new ArrayList<>();
            for (int s = 0; s < p.length; s++) {
                if (!Double.isNaN(p[s]) && p[s] > 0) {
                    lx.add((double) s);
                    ly.add(p[s]);
                }
            }
            XYSeries ls = lat.addSeries(r.mode.label, lx, ly);
            ls.setMarker(SeriesMarkers.NONE);
        }
        for (XYChart c : List.of(tput, lat)) {
            c.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideSW);
        }
        BitmapEncoder.saveBitmap(
                List.of(tput, lat), 2, 1, dir.resolve(fault).toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    static String f(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}

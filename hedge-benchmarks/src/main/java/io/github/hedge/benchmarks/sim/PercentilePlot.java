package io.github.hedge.benchmarks.sim;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Renders latency-by-percentile curves, HdrHistogram style: the x axis is {@code log10(1 / (1 - p))},
 * labelled as percentiles (90%, 99%, 99.9%...), the y axis latency in ms. Written as
 * a PNG with XChart, headless.
 */
public final class PercentilePlot {
    private static final Color[] COLORS = {
        new Color(0xD62728), new Color(0x1F77B4), new Color(0x2CA02C), new Color(0x7F7F7F)
    };

    private PercentilePlot() {}

    /**
     * @param series percentiles per variant, in legend order
     * @param title the chart title
     * @param file the PNG to write (parent directories are created)
     * @throws IOException if it cannot be written
     */
    public static void render(Map<String, Percentiles> series, String title, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder()
                .width(900)
                .height(560)
                .title(title)
                .xAxisTitle("percentile, in nines: 1 = p90, 2 = p99, 3 = p99.9, 4 = p99.99, 5 = p99.999")
                .yAxisTitle("latency (ms)")
                .build();
        // x = log10(1 / (1 - p)) on a linear axis: 0 is p0, 1 is p90, 2 is p99, 3 is p99.9...
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
        chart.getStyler().setXAxisDecimalPattern("0.#");
        chart.getStyler().setXAxisTickMarkSpacingHint(150);

        // points from p0 to p99.999, log-spaced in 1/(1-p)
        int points = 400;
        double[] x = new double[points];
        for (int i = 0; i < points; i++) {
            x[i] = 5.0 * i / (points - 1);
        }
        int c = 0;
        for (Map.Entry<String, Percentiles> e : series.entrySet()) {
            double[] y = new double[points];
            for (int i = 0; i < points; i++) {
                double p = 1 - Math.pow(10, -x[i]);
                y[i] = Math.max(1e-3, e.getValue().at(Math.max(p, 1e-9)));
            }
            XYSeries s = chart.addSeries(e.getKey(), x, y);
            s.setMarker(SeriesMarkers.NONE);
            s.setLineColor(COLORS[c % COLORS.length]);
            s.setLineStyle(
                    "oracle".equals(e.getKey())
                            ? new BasicStroke(
                                    2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f)
                            : new BasicStroke(2f));
            c++;
        }
        Path abs = file.toAbsolutePath();
        if (abs.getParent() != null) {
            Files.createDirectories(abs.getParent());
        }
        String name = abs.toString();
        String base =
                name.toLowerCase(java.util.Locale.ROOT).endsWith(".png") ? name.substring(0, name.length() - 4) : name;
        BitmapEncoder.saveBitmapWithDPI(chart, base, BitmapEncoder.BitmapFormat.PNG, 110);
    }
}

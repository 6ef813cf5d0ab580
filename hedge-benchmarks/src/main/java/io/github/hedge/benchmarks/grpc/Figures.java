package io.github.hedge.benchmarks.grpc;

import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** The figures of measured calls, pooled over segments. */
class Figures {
    final String label;
    final Histogram latencyMicros = new Histogram(3);
    long calls;
    long executions;
    long hedges;
    long hedgesOnUsedBackend;
    long failures;
    double[] extraPerSecond = new double[0];

    Figures(String label) {
        this.label = label;
    }

    double extraLoad() {
        return calls == 0 ? 0 : (double) executions / calls - 1.0;
    }

    void resetFigures() {
        latencyMicros.reset();
        calls = 0;
        executions = 0;
        hedges = 0;
        hedgesOnUsedBackend = 0;
        failures = 0;
    }

    double ms(double p) {
        return latencyMicros.getValueAtPercentile(p) / 1000.0;
    }

    double sameBackendShare() {
        return hedges == 0 ? 0 : (double) hedgesOnUsedBackend / hedges;
    }

    /** Appends a Markdown table of the figures. */
    static void table(StringBuilder out, List<? extends Figures> rows) {
        out.append(
                "| scenario / mode | calls | p50 ms | p99 ms | p999 ms | extra load | hedges | hedges on a used backend |\n");
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Figures r : rows) {
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %d | %.2f | %.2f | %.2f | %.2f%% | %d | %s |%n",
                    r.label,
                    r.calls,
                    r.ms(50),
                    r.ms(99),
                    r.ms(99.9),
                    100 * r.extraLoad(),
                    r.hedges,
                    r.hedges == 0 ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * r.sameBackendShare())));
        }
    }
}

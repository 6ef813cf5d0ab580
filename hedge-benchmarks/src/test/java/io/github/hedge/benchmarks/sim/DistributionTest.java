package io.github.hedge.benchmarks.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DistributionTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                // spec | q | exact quantile
                "lognormal:0,1 | 0.95 | 5.180251602",
                "lognormal:0,1 | 0.5 | 1.0",
                "pareto:2,1 | 0.999 | 31.6227766",
                "pareto:2,1 | 0.99 | 10.0",
                "exp:2 | 0.95 | 5.991464547",
                "bimodal:0.1,1,50 | 0.85 | 1.0",
                "bimodal:0.1,1,50 | 0.95 | 50.0",
                "weibull:1,2 | 0.95 | 5.991464547",
            })
    void quantilesAreExact(String spec, double q, double expected) {
        assertThat(Distribution.parse(spec).quantileMs(q)).isCloseTo(expected, within(expected * 1e-7));
    }

    @Test
    void samplesFollowTheQuantiles() {
        for (String spec : new String[] {"lognormal:0,1", "pareto:2,1", "exp:1", "weibull:0.7,1"}) {
            Distribution d = Distribution.parse(spec);
            SplittableRandom r = new SplittableRandom(7);
            double[] x = new double[200_000];
            for (int i = 0; i < x.length; i++) {
                x[i] = d.sampleMs(r);
            }
            Percentiles p = new Percentiles(x);
            for (double q : new double[] {0.5, 0.9, 0.99}) {
                assertThat(p.at(q)).as(spec + " q" + q).isCloseTo(d.quantileMs(q), within(d.quantileMs(q) * 0.03));
            }
        }
    }

    @Test
    void meansAreExact() {
        assertThat(Distribution.parse("lognormal:0,1").meanMs()).isCloseTo(Math.exp(0.5), within(1e-12));
        assertThat(Distribution.parse("pareto:2,1").meanMs()).isCloseTo(2.0, within(1e-12));
        assertThat(Distribution.parse("pareto:1,1").meanMs()).isInfinite();
        assertThat(Distribution.parse("weibull:1,3").meanMs()).isCloseTo(3.0, within(1e-9));
        assertThat(Distribution.parse("weibull:2,1").meanMs()).isCloseTo(Math.sqrt(Math.PI) / 2, within(1e-9));
        assertThat(Distribution.parse("bimodal:0.25,1,5").meanMs()).isCloseTo(2.0, within(1e-12));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "''| empty distribution SPEC",
                "lognormal | missing ':'",
                "gamma:1,2 | unknown distribution 'gamma'",
                "lognormal:0 | lognormal takes 2 parameters (lognormal:MU,SIGMA), got 1",
                "lognormal:0,1,2 | got 3",
                "lognormal:0,0 | SIGMA must be > 0",
                "pareto:abc,1 | ALPHA is not a finite number: 'abc'",
                "pareto:2,NaN | SCALE_MS is not a finite number",
                "exp:-1 | MEAN_MS must be > 0",
                "bimodal:1.5,1,2 | P_SLOW must be in [0, 1]",
                "bimodal:0.1,5,2 | SLOW_MS must be >= FAST_MS",
                "weibull:0,1 | SHAPE must be > 0",
                "empirical: | empirical takes a file",
                "empirical:/does/not/exist.txt | no such file: /does/not/exist.txt",
            })
    void badSpecsSayWhatIsWrong(String spec, String message) {
        assertThatThrownBy(() -> Distribution.parse(spec))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message)
                .message()
                .doesNotContain("\n");
    }

    @Test
    void empiricalReadsOneLatencyPerLine(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("lat.txt");
        Files.writeString(f, "# latencies\n3\n1\n\n2\n4\n");
        Distribution d = Distribution.parse("empirical:" + f);
        assertThat(d.quantileMs(0.5)).isEqualTo(2.0);
        assertThat(d.quantileMs(0.75)).isEqualTo(3.0);
        assertThat(d.quantileMs(0.99)).isEqualTo(4.0);
        assertThat(d.meanMs()).isEqualTo(2.5);
        assertThat(d.sampleMs(new SplittableRandom(1))).isIn(1.0, 2.0, 3.0, 4.0);

        Files.writeString(f, "1\nfast\n");
        assertThatThrownBy(() -> Distribution.parse("empirical:" + f))
                .hasMessageContaining("line 2 is not a latency in ms");
    }

    @Test
    void badSpecOnTheCommandLineExitsWith2AndOneLine() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HedgeSim.run(
                new String[] {"tail", "--dist", "pareto:0,1", "--json"},
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(2);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
        assertThat(err.toString(StandardCharsets.UTF_8).trim())
                .isEqualTo("hedge-sim: bad distribution SPEC 'pareto:0,1': ALPHA must be > 0");
    }

    @Test
    void unknownOptionsAndCommandsExitWith2() {
        PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertThat(HedgeSim.run(new String[] {"tail", "--budgett", "0.05"}, sink, sink))
                .isEqualTo(2);
        assertThat(HedgeSim.run(new String[] {"tail", "--budget", "2"}, sink, sink))
                .isEqualTo(2);
        assertThat(HedgeSim.run(new String[] {"tails"}, sink, sink)).isEqualTo(2);
        assertThat(HedgeSim.run(new String[] {}, sink, sink)).isEqualTo(2);
    }
}

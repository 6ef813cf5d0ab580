package io.github.hedge.benchmarks.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * The oracle on the exponential distribution, where it has a closed form: with X1, X2 ~ Exp(1)
 * and d* = ln(1/b), P(min(X1, d* + X2) > t) = e^-t * e^-(t - d*) for t >= d*, so its q-quantile
 * above the (1-b) level is (d* + ln(1/(1-q))) / 2.
 */
class OracleTest {
    @Test
    void oracleMatchesTheClosedFormOnExp1() {
        double b = 0.05;
        Distribution exp = Distribution.parse("exp:1");
        double dStar = exp.quantileMs(1 - b);
        assertThat(dStar).isCloseTo(Math.log(20), within(1e-12));

        Workload w = new Workload(exp, 400_000, 1000, 2, 42);
        Percentiles oracle = new Percentiles(TailSim.oracle(w, dStar));
        for (double q : new double[] {0.99, 0.999}) {
            double exact = (dStar + Math.log(1 / (1 - q))) / 2;
            assertThat(oracle.at(q)).as("q" + q).isCloseTo(exact, within(exact * 0.03));
        }
        // below the (1-b) level the oracle is the unhedged latency
        assertThat(oracle.at(0.5)).isCloseTo(Math.log(2), within(0.02));
    }

    @Test
    void sameSeedSameDraws() {
        Distribution d = Distribution.parse("pareto:2,1");
        Workload a = new Workload(d, 1000, 1000, 2, 9);
        Workload b = new Workload(d, 1000, 1000, 2, 9);
        for (int i = 0; i < 1000; i++) {
            assertThat(a.latencyMs(1, i)).isEqualTo(b.latencyMs(1, i));
            assertThat(a.latencyMs(2, i)).isEqualTo(b.latencyMs(2, i));
            assertThat(a.arrivalNanos(i)).isEqualTo(b.arrivalNanos(i));
        }
        assertThat(a.arrivalNanos(999) / 1e9).isCloseTo(1.0, within(0.15));
    }
}

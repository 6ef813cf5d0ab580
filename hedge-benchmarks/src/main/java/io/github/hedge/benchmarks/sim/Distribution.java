package io.github.hedge.benchmarks.sim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A latency distribution in milliseconds, parsed from a {@code --dist} SPEC, that can be sampled
 * with a seeded generator and knows its exact quantiles (analytically, or for {@code empirical}
 * from the file itself).
 */
public abstract class Distribution {
    /** What a SPEC may be, for error messages. */
    public static final String FORMS = "lognormal:MU,SIGMA | pareto:ALPHA,SCALE_MS | exp:MEAN_MS"
            + " | bimodal:P_SLOW,FAST_MS,SLOW_MS | weibull:SHAPE,SCALE_MS | mixture:P_SLOW,MU1,SIGMA1,MU2,SIGMA2"
            + " | empirical:FILE";

    private final String spec;

    private Distribution(String spec) {
        this.spec = spec;
    }

    /** @return the SPEC this distribution was parsed from */
    public final String spec() {
        return spec;
    }

    /**
     * @param random the generator
     * @return one latency in milliseconds, {@code >= 0}
     */
    public abstract double sampleMs(SplittableRandom random);

    /**
     * @param q a probability in (0, 1)
     * @return the exact q-quantile in milliseconds: the least x with P(X <= x) >= q
     */
    public abstract double quantileMs(double q);

    /** @return the mean in milliseconds ({@code Double.POSITIVE_INFINITY} when it does not exist) */
    public abstract double meanMs();

    @Override
    public String toString() {
        return spec;
    }

    /**
     * Parses a SPEC.
     *
     * @param spec for instance {@code lognormal:0,1} or {@code pareto:2,1}
     * @return the distribution
     * @throws IllegalArgumentException with a one-line message naming the problem
     */
    public static Distribution parse(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("empty distribution SPEC; expected " + FORMS);
        }
        int colon = spec.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException(
                    "bad distribution SPEC '" + spec + "': missing ':' after the name; expected " + FORMS);
        }
        String name = spec.substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT);
        String rest = spec.substring(colon + 1).trim();
        switch (name) {
            case "lognormal": {
                double[] p = numbers(spec, "lognormal", rest, "MU,SIGMA");
                require(spec, p[1] > 0, "SIGMA must be > 0");
                return new LogNormal(spec, p[0], p[1]);
            }
            case "pareto": {
                double[] p = numbers(spec, "pareto", rest, "ALPHA,SCALE_MS");
                require(spec, p[0] > 0, "ALPHA must be > 0");
                require(spec, p[1] > 0, "SCALE_MS must be > 0");
                return new Pareto(spec, p[0], p[1]);
            }
            case "exp": {
                double[] p = numbers(spec, "exp", rest, "MEAN_MS");
                require(spec, p[0] > 0, "MEAN_MS must be > 0");
                return new Exponential(spec, p[0]);
            }
            case "bimodal": {
                double[] p = numbers(spec, "bimodal", rest, "P_SLOW,FAST_MS,SLOW_MS");
                require(spec, p[0] >= 0 && p[0] <= 1, "P_SLOW must be in [0, 1]");
                require(spec, p[1] >= 0, "FAST_MS must be >= 0");
                require(spec, p[2] >= p[1], "SLOW_MS must be >= FAST_MS");
                return new Bimodal(spec, p[0], p[1], p[2]);
            }
            case "weibull": {
                double[] p = numbers(spec, "weibull", rest, "SHAPE,SCALE_MS");
                require(spec, p[0] > 0, "SHAPE must be > 0");
                require(spec, p[1] > 0, "SCALE_MS must be > 0");
                return new Weibull(spec, p[0], p[1]);
            }
            case "mixture": {
                double[] p = numbers(spec, "mixture", rest, "P_SLOW,MU1,SIGMA1,MU2,SIGMA2");
                require(spec, p[0] >= 0 && p[0] <= 1, "P_SLOW must be in [0, 1]");
                require(spec, p[2] > 0 && p[4] > 0, "SIGMA1 and SIGMA2 must be > 0");
                return new Mixture(spec, p[0], p[1], p[2], p[3], p[4]);
            }
            case "empirical":
                return Empirical.load(spec, rest);
            default:
                throw new IllegalArgumentException(
                        "bad distribution SPEC '" + spec + "': unknown distribution '" + name + "'; expected " + FORMS);
        }
    }

    private static void require(String spec, boolean ok, String what) {
        if (!ok) {
            throw new IllegalArgumentException("bad distribution SPEC '" + spec + "': " + what);
        }
    }

    private static double[] numbers(String spec, String name, String rest, String params) {
        String[] parts = rest.isEmpty() ? new String[0] : rest.split(",", -1);
        int want = params.split(",").length;
        if (parts.length != want) {
            throw new IllegalArgumentException("bad distribution SPEC '" + spec + "': " + name + " takes " + want
                    + " parameter" + (want == 1 ? "" : "s") + " (" + name + ":" + params + "), got " + parts.length);
        }
        double[] out = new double[want];
        for (int i = 0; i < want; i++) {
            String s = parts[i].trim();
            try {
                out[i] = Double.parseDouble(s);
            } catch (NumberFormatException e) {
                out[i] = Double.NaN;
            }
            if (!Double.isFinite(out[i]) || s.isEmpty()) {
                throw new IllegalArgumentException("bad distribution SPEC '" + spec + "': " + params.split(",")[i]
                        + " is not a finite number: '" + s + "'");
            }
        }
        return out;
    }

    /** Uniform in (0, 1), never 0, so logarithms and powers stay finite. */
    static double open01(SplittableRandom r) {
        double u;
        do {
            u = r.nextDouble();
        } while (u == 0.0);
        return u;
    }

    /**
     * The standard normal quantile function (Acklam's rational approximation, relative error below
     * 1.2e-9: far below the sampling error of any quantile the simulator reports).
     *
     * @param p a probability in (0, 1)
     * @return z with Phi(z) = p
     */
    static double normalQuantile(double p) {
        if (!(p > 0 && p < 1)) {
            throw new IllegalArgumentException("p must be in (0, 1), was " + p);
        }
        final double[] a = {
            -3.969683028665376e+01,
            2.209460984245205e+02,
            -2.759285104469687e+02,
            1.383577518672690e+02,
            -3.066479806614716e+01,
            2.506628277459239e+00
        };
        final double[] b = {
            -5.447609879822406e+01,
            1.615858368580409e+02,
            -1.556989798598866e+02,
            6.680131188771972e+01,
            -1.328068155288572e+01
        };
        final double[] c = {
            -7.784894002430293e-03,
            -3.223964580411365e-01,
            -2.400758277161838e+00,
            -2.549732539343734e+00,
            4.374664141464968e+00,
            2.938163982698783e+00
        };
        final double[] d = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
        double plow = 0.02425;
        double x;
        if (p < plow) {
            double q = Math.sqrt(-2 * Math.log(p));
            x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                    / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        } else if (p <= 1 - plow) {
            double q = p - 0.5;
            double r = q * q;
            x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
                    * q
                    / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
        } else {
            double q = Math.sqrt(-2 * Math.log(1 - p));
            x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                    / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        }
        return x;
    }

    /** exp(N(mu, sigma)) milliseconds. */
    static final class LogNormal extends Distribution {
        final double mu;
        final double sigma;

        LogNormal(String spec, double mu, double sigma) {
            super(spec);
            this.mu = mu;
            this.sigma = sigma;
        }

        @Override
        public double sampleMs(SplittableRandom r) {
            return Math.exp(mu + sigma * gaussian(r));
        }

        @Override
        public double quantileMs(double q) {
            return Math.exp(mu + sigma * normalQuantile(q));
        }

        @Override
        public double meanMs() {
            return Math.exp(mu + sigma * sigma / 2);
        }
    }

    /** Polar Box-Muller; one value per call so draws stay aligned per request. */
    static double gaussian(SplittableRandom r) {
        double u;
        double v;
        double s;
        do {
            u = 2 * r.nextDouble() - 1;
            v = 2 * r.nextDouble() - 1;
            s = u * u + v * v;
        } while (s >= 1 || s == 0);
        return u * Math.sqrt(-2 * Math.log(s) / s);
    }

    /** Pareto type I: {@code SCALE * U^(-1/ALPHA)}. */
    static final class Pareto extends Distribution {
        final double alpha;
        final double scale;

        Pareto(String spec, double alpha, double scale) {
            super(spec);
            this.alpha = alpha;
            this.scale = scale;
        }

        @Override
        public double sampleMs(SplittableRandom r) {
            return scale * Math.pow(open01(r), -1.0 / alpha);
        }

        @Override
        public double quantileMs(double q) {
            return scale * Math.pow(1 - q, -1.0 / alpha);
        }

        @Override
        public double meanMs() {
            return alpha > 1 ? alpha * scale / (alpha - 1) : Double.POSITIVE_INFINITY;
        }
    }

    /** Exponential with the given mean. */
    static final class Exponential extends Distribution {
        final double mean;

        Exponential(String spec, double mean) {
            super(spec);
            this.mean = mean;
        }

        @Override
        public double sampleMs(SplittableRandom r) {
            return -mean * Math.log(open01(r));
        }

        @Override
        public double quantileMs(double q) {
            return -mean * Math.log(1 - q);
        }

        @Override
        public double meanMs() {
            return mean;
        }
    }

    /** SLOW_MS with probability P_SLOW, else FAST_MS. */
    static final class Bimodal extends Distribution {
        final double pSlow;
        final double fast;
        final double slow;

        Bimodal(String spec, double pSlow, double fast, double slow) {
            super(spec);
            this.pSlow = pSlow;
            this.fast = fast;
            this.slow = slow;
        }

        @Override
        public double sampleMs(SplittableRandom r) {
            return r.nextDouble() < pSlow ? slow : fast;
        }

        @Override
        public double quantileMs(double q) {
            return q <= 1 - pSlow ? fast : slow;
        }

        @Override
        public double meanMs() {
            return pSlow * slow + (1 - pSlow) * fast;
        }
    }

    /** Weibull: {@code SCALE * (-ln U)^(1/SHAPE)}. */
    static final class Weibull extends Distribution {
        final double shape;
        final double scale;

        Weibull(String spec, double shape, double scale) {
            super(spec);
            this.shape = shape;
            this.scale = scale;
        }

        @Override
        public double sampleMs(SplittableRandom r) {
            return scale * Math.pow(-Math.log(open01(r)), 1.0 / shape);
        }

        @Override
        public double quantileMs(double q) {
            return scale * Math.pow(-Math.log(1 - q), 1.0 / shape);
        }

        @Override
        public double meanMs() {
            return scale * Math.exp(logGamma(1 + 1.0 / shape));
        }
    }

    /**
     * Two lognormal modes: with probability {@code P_SLOW} exp(N(MU2, SIGMA2)), else exp(N(MU1,
     * SIGMA1)) milliseconds; the shape of a service whose requests mostly hit a cache and sometimes
     * go to disk or wait for a pause. Quantiles by bisection on the exact distribution function.
     */
    static final class Mixture extends Distribution {
        final double pSlow;
        final double mu1;
        final double sigma1;
        final double mu2;
        final double sigma2;

        Mixture(String spec, double pSlow, double mu1, double sigma1, double mu2, double sigma2) {
            super(spec);
            this.pSlow = pSlow;
            this.mu1 = mu1;
            this.sigma1 = sigma1;
            this.mu2 = mu2;
            this.sigma2 = sigma2;
        }

        @Override
        public double sampleMs(SplittableRandom r) {
            boolean slow = r.nextDouble() < pSlow;
            double z = gaussian(r);
            return slow ? Math.exp(mu2 + sigma2 * z) : Math.exp(mu1 + sigma1 * z);
        }

        /** P(X > x) for x in log space. */
        private double survival(double lnX) {
            return (1 - pSlow) * normalSurvival((lnX - mu1) / sigma1) + pSlow * normalSurvival((lnX - mu2) / sigma2);
        }

        @Override
        public double quantileMs(double q) {
            double target = 1 - q;
            double lo = Math.min(mu1 - 12 * sigma1, mu2 - 12 * sigma2);
            double hi = Math.max(mu1 + 12 * sigma1, mu2 + 12 * sigma2);
            for (int i = 0; i < 200; i++) {
                double mid = (lo + hi) / 2;
                if (survival(mid) > target) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return Math.exp((lo + hi) / 2);
        }

        @Override
        public double meanMs() {
            return (1 - pSlow) * Math.exp(mu1 + sigma1 * sigma1 / 2) + pSlow * Math.exp(mu2 + sigma2 * sigma2 / 2);
        }
    }

    /** P(Z > z) for a standard normal Z, via erfc (Numerical Recipes' erfcc, relative error below 1.2e-7). */
    static double normalSurvival(double z) {
        double x = z / Math.sqrt(2);
        double ax = Math.abs(x);
        double t = 1 / (1 + 0.5 * ax);
        double erfc = t
                * Math.exp(
                        -ax * ax
                                - 1.26551223
                                + t
                                        * (1.00002368
                                                + t
                                                        * (0.37409196
                                                                + t
                                                                        * (0.09678418
                                                                                + t
                                                                                        * (-0.18628806
                                                                                                + t
                                                                                                        * (0.27886807
                                                                                                                + t
                                                                                                                        * (-1.13520398
                                                                                                                                + t
                                                                                                                                        * (1.48851587
                                                                                                                                                + t
                                                                                                                                                        * (-0.82215223
                                                                                                                                                                + t
                                                                                                                                                                        * 0.17087277)))))))));
        return 0.5 * (x >= 0 ? erfc : 2 - erfc);
    }

    /** Lanczos approximation of ln Gamma(x), x > 0. */
    static double logGamma(double x) {
        double[] g = {
            676.5203681218851,
            -1259.1392167224028,
            771.32342877765313,
            -176.61502916214059,
            12.507343278686905,
            -0.13857109526572012,
            9.9843695780195716e-6,
            1.5056327351493116e-7
        };
        if (x < 0.5) {
            return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
        }
        x -= 1;
        double a = 0.99999999999980993;
        double t = x + 7.5;
        for (int i = 0; i < g.length; i++) {
            a += g[i] / (x + i + 1);
        }
        return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
    }

    /** Draws uniformly from the latencies of a file, one value in ms per line. */
    static final class Empirical extends Distribution {
        final double[] sorted;

        private Empirical(String spec, double[] sorted) {
            super(spec);
            this.sorted = sorted;
        }

        static Empirical load(String spec, String file) {
            if (file.isEmpty()) {
                throw new IllegalArgumentException(
                        "bad distribution SPEC '" + spec + "': empirical takes a file (empirical:FILE)");
            }
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(file));
            } catch (NoSuchFileException e) {
                throw new IllegalArgumentException("bad distribution SPEC '" + spec + "': no such file: " + file);
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException(
                        "bad distribution SPEC '" + spec + "': cannot read " + file + ": " + e.getMessage());
            }
            List<Double> values = new ArrayList<>();
            int n = 0;
            for (String line : lines) {
                n++;
                String s = line.trim();
                if (s.isEmpty() || s.startsWith("#")) {
                    continue;
                }
                double v;
                try {
                    v = Double.parseDouble(s);
                } catch (NumberFormatException e) {
                    v = Double.NaN;
                }
                if (!Double.isFinite(v) || v < 0) {
                    throw new IllegalArgumentException("bad distribution SPEC '" + spec + "': " + file + " line " + n
                            + " is not a latency in ms (a finite number >= 0): '" + s + "'");
                }
                values.add(v);
            }
            if (values.isEmpty()) {
                throw new IllegalArgumentException(
                        "bad distribution SPEC '" + spec + "': " + file + " holds no latencies");
            }
            double[] a = values.stream().mapToDouble(Double::doubleValue).toArray();
            Arrays.sort(a);
            return new Empirical(spec, a);
        }

        @Override
        public double sampleMs(SplittableRandom r) {
            return sorted[r.nextInt(sorted.length)];
        }

        @Override
        public double quantileMs(double q) {
            int i = (int) Math.ceil(q * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
        }

        @Override
        public double meanMs() {
            double s = 0;
            for (double v : sorted) {
                s += v;
            }
            return s / sorted.length;
        }
    }
}

package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.PercentileDelay;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code sweep} command: the {@code tail} scenario over a grid of distribution families, shape
 * parameters and budgets, one JSON line per cell, then one summary line with the worst ratios
 * against issue 7's targets:
 *
 * <ul>
 *   <li>hedged p99.9 / oracle &le; 1.05 and hedged p99.99 / oracle &le; 1.25 in every cell where the
 *       oracle improves on unhedged at that percentile (by more than 0.1%);
 *   <li>extra load &le; 1.05 b + 0.0005 in every cell;
 *   <li>budget denials &le; 1% of hedges sent.
 * </ul>
 *
 * Cells run one after the other (one simulation at a time), each on its own draws from the same
 * seed.
 */
public final class SweepSim {
    /** The default grid of distributions: issue 7's families and shapes. */
    static final String[] DEFAULT_DISTS = {
        "lognormal:0,0.5",
        "lognormal:0,1",
        "lognormal:0,1.5",
        "lognormal:0,2",
        "pareto:1.5,1",
        "pareto:2,1",
        "pareto:3,1",
        "weibull:0.4,1",
        "weibull:0.7,1",
        "weibull:1,1",
        "weibull:1.5,1",
        // slow share 0.5% and 3%: below and above the 1% and 5% budgets, above 0.1%, below 10%
        "bimodal:0.005,1,20",
        "bimodal:0.03,1,20",
        // a cache-hit / miss service: 97% around 1 ms, 3% around 12 ms with a wide spread
        "mixture:0.03,0,0.4,2.5,0.8",
    };

    /** The default budgets. */
    static final double[] DEFAULT_BUDGETS = {0.001, 0.01, 0.05, 0.1};

    /** Settings of one sweep. */
    public static final class Config {
        final List<Distribution> dists;
        final double[] budgets;
        final int smallRequests;
        final int largeRequests;
        final long seed;
        final double rate;
        final double loserSampling;
        final PercentileDelay.Scope scope;

        /**
         * @param dists the distributions
         * @param budgets the budgets
         * @param smallRequests requests per cell where b &gt; 0.01
         * @param largeRequests requests per cell where b &le; 0.01
         * @param seed the seed of every cell
         * @param rate arrivals per virtual second
         * @param loserSampling the hedged variant's {@code HedgeConfig.loserSampling}, in [0, 1]
         * @param scope the hedged variant's delay scope, or null for the library's default
         */
        public Config(
                List<Distribution> dists,
                double[] budgets,
                int smallRequests,
                int largeRequests,
                long seed,
                double rate,
                double loserSampling,
                PercentileDelay.Scope scope) {
            this.dists = dists;
            this.budgets = budgets;
            this.smallRequests = smallRequests;
            this.largeRequests = largeRequests;
            this.seed = seed;
            this.rate = rate;
            this.loserSampling = loserSampling;
            this.scope = scope;
        }
    }

    private SweepSim() {}

    /**
     * Runs every cell, printing its line as soon as it is done, then the summary line.
     *
     * @param c the settings
     * @param out where the lines go
     */
    public static void run(Config c, PrintStream out) {
        Summary summary = new Summary();
        for (Distribution dist : c.dists) {
            for (double b : c.budgets) {
                int requests = b <= 0.01 ? c.largeRequests : c.smallRequests;
                TailSim.Config tc = new TailSim.Config(dist, b, requests, c.seed, c.rate, c.loserSampling, c.scope);
                long t0 = System.nanoTime();
                TailSim.Result r = TailSim.run(tc);
                HedgeSim.log(String.format(
                        "sweep %s b=%s: %d requests in %.1f s",
                        dist.spec(), b, requests, (System.nanoTime() - t0) / 1e9));
                out.println(cell(r, tc, summary));
                out.flush();
            }
        }
        out.println(summary.json());
    }

    static String cell(TailSim.Result r, TailSim.Config c, Summary summary) {
        Percentiles u = r.variants.get("unhedged");
        Percentiles h = r.variants.get("hedged");
        Percentiles f = r.variants.get("fixed");
        Percentiles o = r.variants.get("oracle");
        double b = c.budget;
        double loadLimit = 1.05 * b + 0.0005;
        boolean improves999 = o.at(0.999) < 0.999 * u.at(0.999);
        boolean improves9999 = o.at(0.9999) < 0.999 * u.at(0.9999);
        double h999 = h.at(0.999) / o.at(0.999);
        double h9999 = h.at(0.9999) / o.at(0.9999);
        double deniedShare = r.hedgedSent == 0 ? 0 : (double) r.hedgedDenied / r.hedgedSent;
        summary.add(c, h999, h9999, improves999, improves9999, r.hedgedExtraLoad / loadLimit, deniedShare);
        summary.addAttemptTime(c, r.hedgedAttemptTime);

        Json j = new Json().beginObject();
        j.field("scenario", "sweep")
                .field("dist", c.dist.spec())
                .field("budget", b)
                .field("requests", c.requests)
                .field("seed", c.seed)
                .field("loser_sampling", c.loserSampling);
        if (c.scope != null) {
            j.field("scope", c.scope.name());
        }
        for (String v : new String[] {"unhedged", "hedged", "fixed", "oracle"}) {
            Percentiles p = r.variants.get(v);
            j.beginObject(v)
                    .field("p99", Percentiles.round(p.at(0.99)))
                    .field("p999", Percentiles.round(p.at(0.999)))
                    .field("p9999", Percentiles.round(p.at(0.9999)));
            switch (v) {
                case "hedged":
                    j.field("extra_load", Percentiles.round5(r.hedgedExtraLoad))
                            .field("hedges_sent", r.hedgedSent)
                            .field("budget_denied", r.hedgedDenied);
                    TailJson.hedgedDelay(j, r);
                    TailJson.attemptTime(j, r.hedgedAttemptTime);
                    break;
                case "fixed":
                    j.field("extra_load", Percentiles.round5(r.fixedExtraLoad))
                            .field("hedges_sent", r.fixedSent)
                            .field("budget_denied", r.fixedDenied);
                    TailJson.attemptTime(j, r.fixedAttemptTime);
                    break;
                case "oracle":
                    TailJson.oracle(j, r);
                    break;
                default:
                    break;
            }
            j.endObject();
        }
        TailJson.estimatedUnhedged(j, r, false);
        if (r.estimatedUnhedged != null) {
            summary.addEstimate(
                    c, r.estimatedUnhedged[0] / u.at(0.99), r.estimatedUnhedged[1] / u.at(0.999), r.estimateSupported);
        }
        j.field("hedged_p999_over_oracle", Percentiles.round(h999))
                .field("hedged_p9999_over_oracle", Percentiles.round(h9999))
                .field("fixed_p9999_over_oracle", Percentiles.round(f.at(0.9999) / o.at(0.9999)))
                .field("oracle_improves_p999", improves999)
                .field("oracle_improves_p9999", improves9999)
                .field("extra_load_limit", Percentiles.round5(loadLimit))
                .field("denied_share_of_sent", Percentiles.round5(deniedShare))
                .field("ok_p999", !improves999 || h999 <= 1.05)
                .field("ok_p9999", !improves9999 || h9999 <= 1.25)
                .field("ok_extra_load", r.hedgedExtraLoad <= loadLimit)
                .field("ok_denials", deniedShare <= 0.01);
        return j.endObject().toString();
    }

    /** The worst of each ratio over the cells, with the cell it came from. */
    static final class Summary {
        private final List<String> failures = new ArrayList<>();
        private int cells;
        private double worst999 = 0;
        private String worst999Cell = "";
        private double worst9999 = 0;
        private String worst9999Cell = "";
        private double worstLoad = 0;
        private String worstLoadCell = "";
        private double worstDenied = 0;
        private String worstDeniedCell = "";
        private double worstEstimate = 0;
        private String worstEstimateCell = "";
        private double worstSupportedEstimate = 0;
        private String worstSupportedEstimateCell = "";
        private int unsupportedP99;
        private int unsupportedP999;
        private double worstAttemptTime = 0;
        private String worstAttemptTimeCell = "";

        /** Informational: the replicas' busy time against unhedged, not a target of issue 7. */
        void addAttemptTime(TailSim.Config c, double ratio) {
            if (ratio > worstAttemptTime) {
                worstAttemptTime = ratio;
                worstAttemptTimeCell = c.dist.spec() + " b=" + c.budget;
            }
        }

        void add(
                TailSim.Config c,
                double h999,
                double h9999,
                boolean improves999,
                boolean improves9999,
                double loadOverLimit,
                double deniedShare) {
            cells++;
            String id = c.dist.spec() + " b=" + c.budget;
            if (improves999 && h999 > worst999) {
                worst999 = h999;
                worst999Cell = id;
            }
            if (improves9999 && h9999 > worst9999) {
                worst9999 = h9999;
                worst9999Cell = id;
            }
            if (loadOverLimit > worstLoad) {
                worstLoad = loadOverLimit;
                worstLoadCell = id;
            }
            if (deniedShare > worstDenied) {
                worstDenied = deniedShare;
                worstDeniedCell = id;
            }
            if (improves999 && h999 > 1.05) {
                failures.add(id + ": p999/oracle " + Percentiles.round(h999));
            }
            if (improves9999 && h9999 > 1.25) {
                failures.add(id + ": p9999/oracle " + Percentiles.round(h9999));
            }
            if (loadOverLimit > 1) {
                failures.add(id + ": extra load over 1.05b+0.0005 by x" + Percentiles.round(loadOverLimit));
            }
            if (deniedShare > 0.01) {
                failures.add(id + ": denials " + Percentiles.round5(deniedShare) + " of hedges sent");
            }
        }

        /**
         * @param supported whether the executor marked its p99 and p99.9 estimates as supported by
         *     its data: the summary also reports the worst error among supported estimates, and in
         *     how many cells it marked p99 and p99.9 unsupported
         */
        void addEstimate(TailSim.Config c, double p99Ratio, double p999Ratio, boolean[] supported) {
            if (c.budget < 0.01) {
                return; // the estimate's target covers budgets of at least 0.01
            }
            String id = c.dist.spec() + " b=" + c.budget;
            // only supported percentiles are reported (the others are NaN): judge those
            double err =
                    Math.max(supported[0] ? Math.abs(p99Ratio - 1) : 0, supported[1] ? Math.abs(p999Ratio - 1) : 0);
            if (err > worstEstimate) {
                worstEstimate = err;
                worstEstimateCell = id;
            }
            double supportedErr = 0;
            if (supported[0]) {
                supportedErr = Math.abs(p99Ratio - 1);
            } else {
                unsupportedP99++;
            }
            if (supported[1]) {
                supportedErr = Math.max(supportedErr, Math.abs(p999Ratio - 1));
            } else {
                unsupportedP999++;
            }
            if (supportedErr > worstSupportedEstimate) {
                worstSupportedEstimate = supportedErr;
                worstSupportedEstimateCell = id;
            }
            if (err > 0.10) {
                failures.add(id + ": unhedged estimate off by " + Percentiles.round(err));
            }
        }

        String json() {
            Json j = new Json().beginObject();
            j.field("scenario", "sweep-summary")
                    .field("cells", cells)
                    .field("worst_hedged_p999_over_oracle", Percentiles.round(worst999))
                    .field("worst_hedged_p999_cell", worst999Cell)
                    .field("worst_hedged_p9999_over_oracle", Percentiles.round(worst9999))
                    .field("worst_hedged_p9999_cell", worst9999Cell)
                    .field("worst_extra_load_over_limit", Percentiles.round(worstLoad))
                    .field("worst_extra_load_cell", worstLoadCell)
                    .field("worst_denied_share_of_sent", Percentiles.round5(worstDenied))
                    .field("worst_denied_cell", worstDeniedCell)
                    .field("worst_unhedged_estimate_error", Percentiles.round(worstEstimate))
                    .field("worst_unhedged_estimate_cell", worstEstimateCell)
                    .field("worst_supported_estimate_error", Percentiles.round(worstSupportedEstimate))
                    .field("worst_supported_estimate_cell", worstSupportedEstimateCell)
                    .field("cells_p99_estimate_unsupported", unsupportedP99)
                    .field("cells_p999_estimate_unsupported", unsupportedP999)
                    .field("worst_attempt_time_over_unhedged", Percentiles.round5(worstAttemptTime))
                    .field("worst_attempt_time_cell", worstAttemptTimeCell)
                    .field("failures", failures.size());
            j.beginArray("failed");
            for (String f : failures) {
                j.value(f);
            }
            j.endArray();
            return j.endObject().toString();
        }
    }
}

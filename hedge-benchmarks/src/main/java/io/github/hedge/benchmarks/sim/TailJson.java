package io.github.hedge.benchmarks.sim;

/**
 * The JSON pieces that {@code tail --json} and each {@code sweep} cell share: the fields of the
 * hedged, fixed and oracle variants of a {@link TailSim.Result}, and the estimate of the unhedged
 * tail. Each writes its fields, in their order, into an open object of a {@link Json}.
 */
final class TailJson {
    private TailJson() {}

    /** The executor's delay over the run: the last one and the log's mean and deviation. */
    static Json hedgedDelay(Json j, TailSim.Result r) {
        return j.field("final_delay_ms", Percentiles.round(r.hedgedFinalDelayMs))
                .field("delay_log_mean", Percentiles.round5(r.delayLogMean))
                .field("delay_log_sd", Percentiles.round5(r.delayLogSd));
    }

    /** The replicas' busy time against unhedged. */
    static Json attemptTime(Json j, double overUnhedged) {
        return j.field("attempt_time_over_unhedged", Percentiles.round5(overUnhedged));
    }

    /** The oracle variant's own fields: the hindsight delay, its extra load and busy time. */
    static Json oracle(Json j, TailSim.Result r) {
        j.field("delay_ms", Percentiles.round(r.dStarMs)).field("extra_load", Percentiles.round5(r.oracleExtraLoad));
        return attemptTime(j, r.oracleAttemptTime);
    }

    /**
     * The object {@code estimated_unhedged}: the executor's estimate of the unhedged p99 and p99.9
     * against the true ones, and whether its data support each; nothing when the run made none.
     *
     * @param withCensored whether to write {@code censored_primaries} too (tail's output has it)
     */
    static Json estimatedUnhedged(Json j, TailSim.Result r, boolean withCensored) {
        if (r.estimatedUnhedged == null) {
            return j;
        }
        Percentiles u = r.variants.get("unhedged");
        j.beginObject("estimated_unhedged")
                .field("p99", Percentiles.round(r.estimatedUnhedged[0]))
                .field("p999", Percentiles.round(r.estimatedUnhedged[1]))
                .field("p99_over_true", Percentiles.round(r.estimatedUnhedged[0] / u.at(0.99)))
                .field("p999_over_true", Percentiles.round(r.estimatedUnhedged[1] / u.at(0.999)));
        if (withCensored) {
            j.field("censored_primaries", r.censoredPrimaries);
        }
        return j.field("p99_supported", r.estimateSupported[0])
                .field("p999_supported", r.estimateSupported[1])
                .endObject();
    }
}

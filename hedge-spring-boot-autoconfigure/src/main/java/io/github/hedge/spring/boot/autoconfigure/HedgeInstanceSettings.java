package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.core.PercentileDelay;
import java.time.Duration;

/**
 * The effective settings of one instance after inheriting from {@code hedge.defaults}, as the
 * {@code hedges} actuator endpoint shows them. Immutable.
 *
 * @param maxAttempts most attempts per call, primary included
 * @param delay the delay policy, described (e.g. {@code percentile 0.95} or {@code fixed 20ms})
 * @param maxExtraLoad the budget: extra attempts per primary call in the long run (a token bucket, see {@code HedgeBudget})
 * @param minDelay the smallest delay before a hedge
 * @param maxDelay the largest delay before a hedge
 * @param timeout the overall deadline of a call, or null
 * @param idempotent whether calls that do not say are idempotent (may be hedged)
 * @param slowCallThreshold calls slower than this are logged, or null for no log
 * @param savingsWindow how long a call counts in the executor's savings
 * @param loserSampling the share of beaten primaries left running to completion, in [0, 1]
 */
public record HedgeInstanceSettings(
        int maxAttempts,
        String delay,
        double maxExtraLoad,
        Duration minDelay,
        Duration maxDelay,
        Duration timeout,
        boolean idempotent,
        Duration slowCallThreshold,
        Duration savingsWindow,
        double loserSampling) {

    /**
     * @param duration a duration, or null
     * @return it the way it is written in properties ({@code 20ms}, {@code 10s}), else ISO-8601;
     *     null for null
     */
    public static String text(Duration duration) {
        return duration == null ? null : SettingsResolver.fmt(duration);
    }

    /**
     * @param delay an adaptive delay
     * @return it the way {@link #delay()} writes it, e.g. {@code percentile 0.95 in [0ms, 10s]},
     *     followed by {@code with budget feedback} when it aims at less demand while the budget
     *     runs low
     */
    public static String describe(PercentileDelay delay) {
        return "percentile " + delay.percentile() + " in [" + text(delay.min()) + ", " + text(delay.max()) + "]"
                + (delay.budgetFeedback() ? " with budget feedback" : "");
    }
}

package io.github.hedge.core;

/**
 * Where the delay before a call's next hedge comes from now ({@link
 * HedgedExecutor#currentDelaySource()}, the {@code hedge.delay.source} gauge, the actuator).
 */
public enum DelaySource {
    /** an adaptive delay's own estimate: its percentile, trusted */
    ESTIMATE,
    /** the built-in warm-up bound, while the percentile is not trusted yet */
    WARM_UP,
    /** a fallback of the user's own, while the percentile is not trusted yet */
    FALLBACK,
    /** a delay that reads no latency ({@code fixed}, {@code increasing}...), or a combination of policies */
    POLICY,
    /**
     * an adaptive delay raised to the percentile at which demand for hedges meets what the budget
     * supplies: the budget is short of tokens; or, during warm-up, no hedge at all, because the
     * budget pays for too few hedges over the first calls ({@link PercentileDelay.Builder#budgetFeedback})
     */
    BUDGET
}

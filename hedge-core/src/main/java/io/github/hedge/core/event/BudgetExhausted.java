package io.github.hedge.core.event;

/**
 * A hedge was refused by the hedge budget for good: it had no token when the hedge was due, and
 * either nothing else was running or the call ended before a token came. One event per refused
 * attempt; {@link io.github.hedge.core.HedgeStats#budgetDenied()} and the meter {@code
 * hedge.budget.denied} count the same refusals. A hedge that waited for a token and then got one is
 * not a refusal: it is a {@link HedgeSent} with reason {@link HedgeSent.Reason#BUDGET_DEFERRED}.
 * Immutable, so safe to share between threads; times are in nanoseconds.
 *
 * @param executorName the executor's name
 * @param callId the call
 * @param attemptNumber the attempt that was refused
 * @param timestampNanos ticker time, in nanoseconds
 */
public record BudgetExhausted(String executorName, long callId, int attemptNumber, long timestampNanos)
        implements HedgeEvent {}

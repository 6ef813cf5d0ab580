package io.github.hedge.core;

/**
 * Counters of one {@link HedgedExecutor} since it was created, read at one instant. Immutable.
 * Under load the fields are read one after another, so they may disagree by a call or two.
 *
 * @param calls calls started
 * @param successes calls that ended with a result
 * @param failures calls that ended with an attempt's error
 * @param deadlineExceeded calls ended by their deadline
 * @param cancelled calls cancelled by their caller
 * @param attempts attempts started, primaries included
 * @param hedgesSent attempts started beyond the primary
 * @param hedgesWon calls whose answer came from a hedge
 * @param budgetDenied hedges the budget refused for good: it had no token at the delay, and the
 *     call ended (or had nothing left running) before one came back; a hedge that waited and then got
 *     its token is not counted here (it is a hedge sent, reason {@code BUDGET_DEFERRED})
 * @param notHedgedNonIdempotent calls that could not be hedged because they are not idempotent
 * @param inFlightCalls calls started and not yet ended
 * @param pendingAttempts attempts started and neither completed nor cancelled
 * @param pendingTimers hedge timers and call deadlines armed and neither fired nor cancelled (the
 *     scheduler itself holds at most two tasks per executor for all of them: one for hedge timers,
 *     one for deadlines)
 */
public record HedgeStats(
        long calls,
        long successes,
        long failures,
        long deadlineExceeded,
        long cancelled,
        long attempts,
        long hedgesSent,
        long hedgesWon,
        long budgetDenied,
        long notHedgedNonIdempotent,
        long inFlightCalls,
        long pendingAttempts,
        long pendingTimers) {}

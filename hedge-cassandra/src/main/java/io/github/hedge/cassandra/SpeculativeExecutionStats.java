package io.github.hedge.cassandra;

/**
 * Counters of one {@link HedgeSpeculativeExecutionPolicy} since it was created. An immutable
 * snapshot.
 *
 * @param primaries idempotent requests whose first execution went out (they pay for the budget)
 * @param scheduled speculative executions the policy scheduled (most never fire: the request
 *     completes first)
 * @param sent speculative executions that really went out, each charged to the budget
 * @param budgetDenied speculative executions that came due but were not sent: the budget was spent
 * @param warmingUp requests for which no execution was scheduled because the delay was not known yet
 */
public record SpeculativeExecutionStats(long primaries, long scheduled, long sent, long budgetDenied, long warmingUp) {
    /** @return extra executions per primary ({@code sent / primaries}), 0 without primaries */
    public double extraLoad() {
        return primaries == 0 ? 0 : (double) sent / primaries;
    }
}

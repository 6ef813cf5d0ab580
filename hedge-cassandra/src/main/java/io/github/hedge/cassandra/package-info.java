/**
 * Hedged requests for the Cassandra Java driver 4.x, in two forms.
 *
 * <ul>
 *   <li>{@link io.github.hedge.cassandra.HedgedCqlSession}: wraps a {@code CqlSession}; idempotent
 *       statements run through a {@link io.github.hedge.core.HedgedExecutor}, each attempt pinned to
 *       a replica not tried yet, timed by hedge's scheduler, charged to hedge's budget.
 *   <li>{@link io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy} with {@link
 *       io.github.hedge.cassandra.HedgeLoadBalancingPolicy}: configuration only; the driver runs the
 *       speculative executions, hedge decides the delay (adaptive), charges the budget when an
 *       execution really goes out, and optionally orders nodes by latency.
 * </ul>
 *
 * Everything under {@code io.github.hedge.cassandra.internal} is an implementation detail.
 */
package io.github.hedge.cassandra;

/**
 * Hedging for Project Reactor: {@link io.github.hedge.reactor.HedgeOperator} hedges a {@code Mono}
 * with {@code transformDeferred}, {@link io.github.hedge.reactor.HedgedMono} builds one attempt by
 * attempt. Both run on hedge-core's {@link io.github.hedge.core.HedgedExecutor}.
 */
package io.github.hedge.reactor;

/** A hedged {@code Mono} next to no hedging and a hand-written fixed-delay hedge, in virtual time. */
package io.github.hedge.benchmarks.reactor;

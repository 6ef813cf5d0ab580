/** A hedged {@code WebClient} next to no hedging and a hand-written fixed-delay hedge, on real servers. */
package io.github.hedge.benchmarks.http;

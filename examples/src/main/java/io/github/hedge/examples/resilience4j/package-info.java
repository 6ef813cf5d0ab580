/** Copyable programs that compose hedge with resilience4j's Retry and CircuitBreaker. */
package io.github.hedge.examples.resilience4j;

/**
 * The figures hedge publishes: JMH benchmarks of the hot path ({@code jmh}) and the virtual-time
 * tail simulator with its real-time timer check ({@code sim}). Not part of the library.
 */
package io.github.hedge.benchmarks;

/**
 * The charts of docs/benchmarks.md, drawn as plain SVG from the committed raw results under
 * {@code hedge-benchmarks/results/} ({@link io.github.hedge.benchmarks.charts.BenchmarkCharts}).
 * Not part of the library.
 */
package io.github.hedge.benchmarks.charts;

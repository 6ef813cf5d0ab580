/**
 * JMH benchmarks of hedge's hot path, run from {@code benchmarks.jar}: the executor's overhead
 * when no hedge fires ({@link io.github.hedge.benchmarks.jmh.HedgedOverheadBenchmark}) and the
 * latency tracker's record cost ({@link io.github.hedge.benchmarks.jmh.TrackerRecordBenchmark}),
 * each against its baseline in the same run.
 */
package io.github.hedge.benchmarks.jmh;

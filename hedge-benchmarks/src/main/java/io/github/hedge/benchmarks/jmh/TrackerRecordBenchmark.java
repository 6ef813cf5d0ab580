package io.github.hedge.benchmarks.jmh;

import io.github.hedge.core.LatencyTracker;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Recorder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * The cost of recording one latency in the {@link LatencyTracker} shared by two threads, against
 * one shared HdrHistogram {@link Recorder} (the obvious alternative) in the same run. Latencies
 * cycle through a pre-drawn table of lognormal values around 1 ms so both see the same values.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
@Threads(2)
public class TrackerRecordBenchmark {
    static final int VALUES = 4096;

    LatencyTracker tracker;
    Recorder recorder;

    /** Per-thread cursor into the value table. */
    @State(Scope.Thread)
    public static class Values {
        final long[] nanos = new long[VALUES];
        int i;

        /** Draws the table. */
        @Setup
        public void setUp() {
            SplittableRandom r = new SplittableRandom(Thread.currentThread().getId());
            for (int k = 0; k < VALUES; k++) {
                double z = r.nextGaussian();
                nanos[k] = (long) (1_000_000 * Math.exp(z));
            }
        }

        long next() {
            int k = i;
            i = (k + 1) & (VALUES - 1);
            return nanos[k];
        }
    }

    /** Builds a tracker with the defaults and a Recorder with 3 significant digits. */
    @Setup
    public void setUp() {
        tracker = LatencyTracker.ofDefaults();
        recorder = new Recorder(3);
    }

    /** @param v per-thread values */
    @Benchmark
    public void trackerRecord(Values v) {
        tracker.record(v.next());
    }

    /** @param v per-thread values */
    @Benchmark
    public void trackerRecordTarget(Values v) {
        tracker.record("replica-1", v.next());
    }

    /** @param v per-thread values */
    @Benchmark
    public void recorderRecord(Values v) {
        recorder.recordValue(v.next());
    }
}

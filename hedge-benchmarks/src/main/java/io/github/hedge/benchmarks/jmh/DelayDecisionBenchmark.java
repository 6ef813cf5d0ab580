package io.github.hedge.benchmarks.jmh;

import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The cost of the delay decision each call makes when it starts, with the default configuration
 * (a p95 percentile delay with budget feedback and a 5% budget): {@link
 * HedgedExecutor#currentDelayNanos()} reads the delay as a starting call does. Two executors, fed
 * in virtual time before the measurement with three targets answering after lognormal latencies
 * around 1 ms: one after 60 calls (warm-up bound, cold-start tokens owed) and one after 20,000
 * calls (trusted estimate). Virtual time stands still while measuring, so the tracker's cached
 * values are read, as between two refreshes.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class DelayDecisionBenchmark {
    private static final List<String> TARGETS = List.of("a", "b", "c");

    HedgedExecutor cold;
    HedgedExecutor warm;

    /** Feeds both executors. */
    @Setup
    public void setUp() {
        cold = fed(60);
        warm = fed(20_000);
    }

    private static HedgedExecutor fed(int calls) {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = HedgedExecutor.of(
                "bench",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .build());
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < calls; i++) {
            int primary = i % 3;
            long[] latency = {lognormal(r), lognormal(r), lognormal(r)};
            ex.executeAsync(ctx -> {
                int k = ctx.attemptNumber();
                ctx.reportTarget(TARGETS.get((primary + k - 1) % 3));
                CompletableFuture<String> f = new CompletableFuture<>();
                var task = time.schedule(() -> f.complete("ok"), latency[Math.min(k, 3) - 1]);
                ctx.onCancel(task::cancel);
                return f;
            });
            time.advanceNanos(1_000_000);
        }
        time.runUntilIdle();
        time.advance(Duration.ofSeconds(1));
        return ex;
    }

    private static long lognormal(SplittableRandom r) {
        return Math.max(1, (long) (1_000_000 * Math.exp(r.nextGaussian())));
    }

    /** @return the delay a call starting on the executor fed 60 calls would get */
    @Benchmark
    public long delayCold() {
        return cold.currentDelayNanos();
    }

    /** @return the delay a call starting on the executor fed 20,000 calls would get */
    @Benchmark
    public long delayWarm() {
        return warm.currentDelayNanos();
    }
}

package io.github.hedge.benchmarks.jmh;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.spi.Schedulers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Per-call deadlines that differ per call: {@code inFlight} calls wait with a 1 h deadline while
 * each measured call carries a 50 ms deadline, which its primary beats (the deadline is armed,
 * then removed). With a due-ordered list this walks every long deadline; with a heap it costs
 * O(log n). Compare {@code inFlight = 0} (no backlog) with {@code 20000}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class MixedDeadlineBenchmark {
    static final CallOptions SHORT = CallOptions.builder()
            .idempotent(false)
            .deadline(Duration.ofMillis(50))
            .build();
    static final CallOptions LONG = CallOptions.builder()
            .idempotent(false)
            .deadline(Duration.ofHours(1))
            .build();

    @Param({"0", "20000"})
    int inFlight;

    HedgedExecutor executor;
    final List<CompletableFuture<Object>> backlog = new ArrayList<>();

    /** Per-thread state: the pending future of the measured call's primary. */
    @State(Scope.Thread)
    public static class Pending {
        CompletableFuture<Object> future;
    }

    /** Fills the deadline queue with the long-deadline backlog. */
    @Setup(Level.Trial)
    public void setUp() {
        executor = HedgedExecutor.of(
                "mixed",
                HedgeConfig.builder()
                        .delay(DelayPolicy.never())
                        .scheduler(Schedulers.shared())
                        .build());
        for (int i = 0; i < inFlight; i++) {
            backlog.add(executor.executeAsync(LONG, ctx -> new CompletableFuture<>()));
        }
    }

    /** Ends the backlog. */
    @TearDown(Level.Trial)
    public void tearDown() {
        backlog.forEach(f -> f.cancel(true));
    }

    /** @return one call with a short deadline that its primary beats */
    @Benchmark
    public CompletableFuture<Object> shortDeadlineAmongLongOnes(Pending p) {
        CompletableFuture<Object> call = executor.executeAsync(SHORT, ctx -> {
            CompletableFuture<Object> cf = new CompletableFuture<>();
            p.future = cf;
            return cf;
        });
        p.future.complete(Boolean.TRUE);
        return call;
    }
}

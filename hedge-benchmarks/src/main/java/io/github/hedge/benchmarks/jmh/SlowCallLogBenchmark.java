package io.github.hedge.benchmarks.jmh;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.Subscription;
import io.github.hedge.core.slowlog.SlowCallLog;
import java.time.Duration;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the slow-call log costs a call that is not slow (seed 002: Cassandra's slow query log cost
 * 0.5% of throughput at 1 thread and 5% at 250 threads with nothing logged). Throughput of hedged
 * calls whose primary completes at once, with the log {@code disabled} (not attached) and {@code
 * enabled} with a one-hour threshold no call reaches, so every call pays the log's per-call
 * bookkeeping and none is logged. Run at 1, 2 and 8 threads:
 *
 * <pre>{@code
 * java -jar hedge-benchmarks/target/benchmarks.jar SlowCallLogBenchmark -t 1 -f 2
 * java -jar hedge-benchmarks/target/benchmarks.jar SlowCallLogBenchmark -t 2 -f 2
 * java -jar hedge-benchmarks/target/benchmarks.jar SlowCallLogBenchmark -t 8 -f 2
 * }</pre>
 *
 * The cost is {@code 1 - enabled / disabled} at each thread count.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@State(Scope.Benchmark)
public class SlowCallLogBenchmark {
    static final Object VALUE = Boolean.TRUE;
    static final CallOptions IDEMPOTENT = CallOptions.idempotent();
    static final AttemptFunction<Object> STUB = ctx -> {
        Blackhole.consumeCPU(100);
        return CompletableFuture.completedFuture(VALUE);
    };

    /** {@code disabled}: no log attached; {@code enabled}: attached, threshold one hour. */
    @Param({"disabled", "enabled"})
    public String log;

    HedgedExecutor executor;
    Subscription subscription;

    /** Builds the executor and attaches the log when enabled. */
    @Setup(Level.Trial)
    public void setUp() {
        executor = HedgedExecutor.of(
                "slowlog-bench",
                HedgeConfig.builder()
                        .maxAttempts(2)
                        .delay(DelayPolicy.fixed(Duration.ofSeconds(1)))
                        .idempotentByDefault(true)
                        .build());
        if (log.equals("enabled")) {
            subscription =
                    SlowCallLog.builder().threshold(Duration.ofHours(1)).build().attach(executor.events());
        } else if (!log.equals("disabled")) {
            throw new IllegalArgumentException("log must be disabled or enabled, was " + log);
        }
    }

    /** Detaches the log. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (subscription != null) {
            subscription.close();
        }
    }

    /** @return the caller's future of a call that is never slow */
    @Benchmark
    public CompletableFuture<Object> call() {
        return executor.executeAsync(IDEMPOTENT, STUB);
    }
}

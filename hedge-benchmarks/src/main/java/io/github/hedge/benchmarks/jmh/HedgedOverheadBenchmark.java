package io.github.hedge.benchmarks.jmh;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.observation.HedgeObservations;
import io.github.hedge.core.spi.HedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.spi.Schedulers;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The cost of {@link HedgedExecutor} when no hedge fires, against a direct call of the same
 * stub, and the cost of a bare {@link ScheduledThreadPoolExecutor} schedule + cancel, all in one
 * run. Run with {@code -t 1} and {@code -t 2} and {@code -prof gc} for bytes/op.
 *
 * <ul>
 *   <li>{@code directSync} / {@code hedgedSync}: the stub burns {@code consumeCPU(100)} and returns
 *       an already-completed future. The executor sees the primary done at once and arms no
 *       timer: this is the overhead of the call bookkeeping alone.
 *   <li>{@code directAsync} / {@code hedgedAsync}: the stub burns the same CPU and returns an
 *       incomplete future, which the benchmark thread completes right after {@code executeAsync}
 *       returns. The executor arms its 1 s hedge timer on {@code Schedulers.shared()} and cancels
 *       it when the primary wins: the full no-hedge hot path.
 *   <li>{@code hedgedAsyncNoopObservations}: {@code hedgedAsync} with {@code
 *       HedgeObservations.of(ObservationRegistry.NOOP)} as the call decorator: the cost of
 *       observations when the registry has no handlers.
 *   <li>{@code stpeScheduleCancel}: a 1 s task scheduled on a {@code ScheduledThreadPoolExecutor}
 *       (remove-on-cancel) and cancelled, the baseline of "added cost".
 *   <li>{@code sharedSchedulerScheduleCancel}: the same against hedge's own default scheduler.
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class HedgedOverheadBenchmark {
    static final Object VALUE = Boolean.TRUE;
    static final Runnable NOOP = () -> {};
    static final CallOptions IDEMPOTENT = CallOptions.idempotent();
    static final int CPU_TOKENS = 100;

    HedgedExecutor executor;
    /** {@link #executor}'s configuration, observed through a registry without handlers. */
    HedgedExecutor observed;

    HedgeScheduler shared;
    ScheduledThreadPoolExecutor stpe;

    /** The sync stub: burns CPU, returns a completed future. */
    static final AttemptFunction<Object> SYNC_STUB = ctx -> syncStub();

    /** Per-thread state of the async variant: the pending future of the running attempt. */
    @State(Scope.Thread)
    public static class Pending {
        CompletableFuture<Object> future;

        /** The async stub: burns CPU, returns an incomplete future the benchmark completes. */
        final AttemptFunction<Object> stub = ctx -> {
            Blackhole.consumeCPU(CPU_TOKENS);
            CompletableFuture<Object> cf = new CompletableFuture<>();
            future = cf;
            return cf;
        };
    }

    /** Builds the executor on the real default scheduler and the baseline pool. */
    @Setup(Level.Trial)
    public void setUp() {
        shared = Schedulers.shared();
        executor = HedgedExecutor.of(
                "bench",
                HedgeConfig.builder()
                        .maxAttempts(2)
                        .delay(DelayPolicy.fixed(Duration.ofSeconds(1)))
                        .idempotentByDefault(true)
                        .scheduler(shared)
                        .build());
        observed = HedgedExecutor.of(
                "bench-observed",
                HedgeConfig.builder()
                        .maxAttempts(2)
                        .delay(DelayPolicy.fixed(Duration.ofSeconds(1)))
                        .idempotentByDefault(true)
                        .scheduler(shared)
                        .callDecorator(HedgeObservations.of(ObservationRegistry.NOOP))
                        .build());
        stpe = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "bench-stpe");
            t.setDaemon(true);
            return t;
        });
        stpe.setRemoveOnCancelPolicy(true);
    }

    /** Stops the baseline pool; checks that no hedge fired. */
    @TearDown(Level.Trial)
    public void tearDown() {
        stpe.shutdownNow();
        for (HedgedExecutor e : new HedgedExecutor[] {executor, observed}) {
            if (e.stats().hedgesSent() != 0) {
                throw new IllegalStateException("a hedge fired: " + e.stats());
            }
        }
    }

    static CompletableFuture<Object> syncStub() {
        Blackhole.consumeCPU(CPU_TOKENS);
        return CompletableFuture.completedFuture(VALUE);
    }

    /** @return the stub's future, called directly */
    @Benchmark
    public CompletableFuture<Object> directSync() {
        return syncStub();
    }

    /** @return the caller's future of a hedged call whose primary completed synchronously */
    @Benchmark
    public CompletableFuture<Object> hedgedSync() {
        return executor.executeAsync(IDEMPOTENT, SYNC_STUB);
    }

    /**
     * @param p per-thread state
     * @return the stub's future, completed by the caller right after it returned
     */
    @Benchmark
    public CompletableFuture<Object> directAsync(Pending p) {
        CompletableFuture<Object> cf;
        try {
            cf = p.stub.start(null).toCompletableFuture();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        cf.complete(VALUE);
        return cf;
    }

    /**
     * @param p per-thread state
     * @return the caller's future of a hedged call: timer armed, primary completed, timer cancelled
     */
    @Benchmark
    public CompletableFuture<Object> hedgedAsync(Pending p) {
        CompletableFuture<Object> r = executor.executeAsync(IDEMPOTENT, p.stub);
        p.future.complete(VALUE);
        return r;
    }

    /**
     * @param p per-thread state
     * @return {@link #hedgedAsync} through an executor observed with {@code ObservationRegistry.NOOP}
     */
    @Benchmark
    public CompletableFuture<Object> hedgedAsyncNoopObservations(Pending p) {
        CompletableFuture<Object> r = observed.executeAsync(IDEMPOTENT, p.stub);
        p.future.complete(VALUE);
        return r;
    }

    /** @return the cancelled future of a bare ScheduledThreadPoolExecutor task */
    @Benchmark
    public ScheduledFuture<?> stpeScheduleCancel() {
        ScheduledFuture<?> f = stpe.schedule(NOOP, 1, TimeUnit.SECONDS);
        f.cancel(false);
        return f;
    }

    /** @return whether cancelling a task on hedge's default scheduler prevented it */
    @Benchmark
    public boolean sharedSchedulerScheduleCancel() {
        ScheduledTask t = shared.schedule(NOOP, TimeUnit.SECONDS.toNanos(1));
        return t.cancel();
    }
}

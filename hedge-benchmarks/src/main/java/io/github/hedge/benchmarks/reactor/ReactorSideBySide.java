package io.github.hedge.benchmarks.reactor;

import io.github.hedge.benchmarks.sim.CliArgs;
import io.github.hedge.benchmarks.sim.Distribution;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.github.hedge.reactor.HedgeOperator;
import io.github.hedge.reactor.HedgedMono;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Mono;

/**
 * A hedged {@code Mono} ({@code HedgeOperator} with hedge-core's defaults: adaptive p95 delay, 5%
 * budget, two attempts) next to no hedging and next to what users hand-write today, {@code
 * Mono.firstWithValue(call(), Mono.delay(d).then(call()))} with a fixed delay {@code d}. All three
 * run in one virtual clock (hedge's {@link VirtualTimeScheduler}, also under {@code Mono.delay}),
 * on the same backend: attempt {@code a} of call {@code i} answers after a latency drawn from
 * {@code --dist} by a generator seeded with {@code (seed, i, a)}, so every mode sees the same
 * draws. A cancelled attempt stops at once. Calls arrive every {@code 1/--rate} s (open loop).
 *
 * <p>The fixed delay is the exact quantile of {@code --dist} at one minus hedge's own measured extra
 * load after warm-up: the best fixed delay for that load on a stationary backend, known in advance
 * (a hand-written hedge has no budget, so its extra load is the share of calls slower than {@code
 * d}). The first {@code --cold-calls} calls of each mode are reported apart (cold start), pooled
 * over {@code --cold-seeds} runs: seed {@code --seed} and the next ones, each on a new executor
 * (the p99.9 of one run's first 1,000 calls is its slowest call or two). Prints a Markdown report.
 *
 * <pre>
 * java -cp hedge-benchmarks/target/hedge-sim.jar io.github.hedge.benchmarks.reactor.ReactorSideBySide \
 *     [--dist pareto:1.5,2] [--calls 200000] [--rate 1000] [--cold-calls 1000] [--cold-seeds 100] [--seed 1]
 * </pre>
 */
public final class ReactorSideBySide {
    private final Distribution dist;
    private final long seed;
    private final int calls;
    private final int coldCalls;
    private final long intervalNanos;

    private ReactorSideBySide(Distribution dist, long seed, int calls, int coldCalls, double rate) {
        this.dist = dist;
        this.seed = seed;
        this.calls = calls;
        this.coldCalls = coldCalls;
        this.intervalNanos = (long) (1e9 / rate);
    }

    /** What one mode measured: latency and attempts, cold start and the rest apart. */
    static final class Result {
        final String mode;
        final Histogram cold = new Histogram(3_600_000_000_000L, 3);
        final Histogram warm = new Histogram(3_600_000_000_000L, 3);
        final long[] attempts = new long[2]; // [cold, warm]
        final long[] calls = new long[2]; // [cold, warm]

        Result(String mode) {
            this.mode = mode;
        }

        double extraLoad(boolean isCold) {
            int part = isCold ? 0 : 1;
            return (double) attempts[part] / calls[part] - 1;
        }

        /** Adds {@code other}'s cold start (another seed's) to this one's. */
        void addCold(Result other) {
            cold.add(other.cold);
            attempts[0] += other.attempts[0];
            calls[0] += other.calls[0];
        }
    }

    private interface Mode {
        Mono<Long> call(int i, Result r, VirtualReactorScheduler reactorTime);
    }

    /** Attempt {@code attempt} of call {@code i}: answers after its drawn latency, in virtual time. */
    private Mono<Long> backend(int i, int attempt, Result r, VirtualReactorScheduler reactorTime) {
        return Mono.defer(() -> {
            r.attempts[i < coldCalls ? 0 : 1]++;
            long nanos = drawNanos(i, attempt);
            return Mono.delay(Duration.ofNanos(nanos), reactorTime).thenReturn(nanos);
        });
    }

    private long drawNanos(int i, int attempt) {
        SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + i * 8L + attempt);
        return Math.max(1, Math.round(dist.sampleMs(random) * 1e6));
    }

    private Result run(String name, VirtualTimeScheduler time, Mode mode) {
        VirtualReactorScheduler reactorTime = new VirtualReactorScheduler(time);
        Result r = new Result(name);
        for (int i = 0; i < calls; i++) {
            time.advanceTo(i * intervalNanos);
            long start = time.nanoTime();
            Histogram h = i < coldCalls ? r.cold : r.warm;
            r.calls[i < coldCalls ? 0 : 1]++;
            mode.call(i, r, reactorTime).subscribe(v -> h.recordValue(time.nanoTime() - start));
        }
        time.runUntilIdle();
        if (r.cold.getTotalCount() + r.warm.getTotalCount() != calls) {
            throw new IllegalStateException(name + ": " + (r.cold.getTotalCount() + r.warm.getTotalCount()) + " of "
                    + calls + " calls answered");
        }
        return r;
    }

    private Result none() {
        return run("no hedging", new VirtualTimeScheduler(), (i, r, t) -> backend(i, 1, r, t));
    }

    private Result hedge() {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor executor = HedgedExecutor.of(
                "reactor-bench",
                HedgeConfig.builder()
                        .scheduler(time)
                        .ticker(time)
                        .idempotentByDefault(true)
                        .build());
        HedgeOperator<Long> hedged = HedgeOperator.of(executor);
        return run("hedge (HedgeOperator, defaults)", time, (i, r, t) -> Mono.deferContextual(view ->
                        backend(i, HedgedMono.currentAttempt(view).orElseThrow().attemptNumber(), r, t))
                .transformDeferred(hedged));
    }

    private Result fixed(Duration delay) {
        return run(
                String.format(Locale.ROOT, "Mono.firstWithValue, fixed %.2f ms", delay.toNanos() / 1e6),
                new VirtualTimeScheduler(),
                (i, r, t) -> Mono.firstWithValue(
                        backend(i, 1, r, t), Mono.delay(delay, t).then(backend(i, 2, r, t))));
    }

    private static String row(Result r, boolean cold) {
        Histogram h = cold ? r.cold : r.warm;
        return String.format(
                Locale.ROOT,
                "| %s | %.2f | %.2f | %.2f | %.2f | %.2f%% |",
                r.mode,
                h.getValueAtPercentile(50) / 1e6,
                h.getValueAtPercentile(99) / 1e6,
                h.getValueAtPercentile(99.9) / 1e6,
                h.getValueAtPercentile(99.99) / 1e6,
                100 * r.extraLoad(cold));
    }

    /**
     * @param args see the class comment
     */
    public static void main(String[] args) {
        CliArgs a = CliArgs.parse(
                List.of(args), Set.of("dist", "calls", "rate", "cold-calls", "cold-seeds", "seed"), Set.of());
        Distribution dist = a.dist("pareto:1.5,2");
        int calls = (int) a.integer("calls", 200_000, 2_000, 10_000_000);
        double rate = a.number("rate", 1000, 1, 1_000_000);
        int coldCalls = (int) a.integer("cold-calls", 1000, 1, calls / 2);
        int coldSeeds = (int) a.integer("cold-seeds", 100, 1, 100_000);
        long seed = a.integer("seed", 1, 0, Long.MAX_VALUE - 100_000);
        ReactorSideBySide bench = new ReactorSideBySide(dist, seed, calls, coldCalls, rate);

        Result none = bench.none();
        Result hedge = bench.hedge();
        double extra = Math.max(hedge.extraLoad(false), 1e-6);
        Duration d = Duration.ofNanos(Math.round(dist.quantileMs(1 - extra) * 1e6));
        Result fixed = bench.fixed(d);
        for (long s = seed + 1; s < seed + coldSeeds; s++) {
            // the other seeds' cold starts only: their first calls, each mode on a new executor
            ReactorSideBySide more = new ReactorSideBySide(dist, s, coldCalls, coldCalls, rate);
            none.addCold(more.none());
            hedge.addCold(more.hedge());
            fixed.addCold(more.fixed(d));
        }

        System.out.printf(
                Locale.ROOT,
                "Reactor side by side: %s, %d calls at %.0f/s, seed %d; first %d calls reported apart"
                        + " (cold start), pooled over seeds %d-%d%n%n",
                dist.spec(),
                calls,
                rate,
                seed,
                coldCalls,
                seed,
                seed + coldSeeds - 1);
        String header = "| mode | p50 ms | p99 ms | p99.9 ms | p99.99 ms | extra load |\n|---|---|---|---|---|---|";
        System.out.printf("After the first %d calls (%d calls):%n%n%s%n", coldCalls, calls - coldCalls, header);
        for (Result r : List.of(none, hedge, fixed)) {
            System.out.println(row(r, false));
        }
        System.out.printf(
                "%nCold start, the first %d calls of %d runs (%d calls):%n%n%s%n",
                coldCalls, coldSeeds, hedge.calls[0], header);
        for (Result r : List.of(none, hedge, fixed)) {
            System.out.println(row(r, true));
        }
    }
}

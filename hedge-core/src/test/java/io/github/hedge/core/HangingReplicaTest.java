package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 6 item 3 (Scylla #3746/#7342): one replica of three hangs (its attempts never answer) and
 * the executor hedges at the p95 of per-attempt latency. A cancelled loser is a censored sample,
 * and a replica whose recent samples are all censored leaves the estimate, so the delay stays at
 * the healthy replicas' p95 in every scope, at every rate, with and without budget and deadline.
 * Every delay the policy returns is checked, including the ones computed for a hedge after a
 * primary on the hanging replica ({@code PREVIOUS_TARGET}).
 *
 * <p>Each case runs for {@link #simulatedSeconds(int)}: at least 1,200 calls (at 1 call/s the
 * tracker's window, sized to 1,000 samples, fills and rolls over) and at least four of the
 * tracker's 30 s windows. Pass {@code -Dhedge.hangingReplica.minutes=20} to run every case for 20
 * virtual minutes instead (about 4 minutes of CPU).
 */
class HangingReplicaTest {
    private static final long MS = 1_000_000L;
    private static final double MEDIAN_MS = 20;
    private static final double SIGMA = 0.3;
    /** The healthy replicas' true p95: exp(ln 20 + 1.6449 * 0.3) ms. */
    private static final double HEALTHY_P95_NANOS = MEDIAN_MS * Math.exp(1.6448536 * SIGMA) * MS;

    static Stream<Arguments> cases() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (int rate : new int[] {1, 5, 100, 1000}) {
            for (PercentileDelay.Scope scope : PercentileDelay.Scope.values()) {
                for (boolean budget : new boolean[] {true, false}) {
                    for (boolean deadline : new boolean[] {false, true}) {
                        b.add(Arguments.of(rate, scope, budget, deadline));
                    }
                }
            }
        }
        return b.build();
    }

    /** Virtual seconds per case: max(1,200 calls, 120 s), or the {@code minutes} property. */
    private static long simulatedSeconds(int callsPerSecond) {
        Integer minutes = Integer.getInteger("hedge.hangingReplica.minutes");
        if (minutes != null) {
            return minutes * 60L;
        }
        return Math.max(1_200L / callsPerSecond, 120L);
    }

    @ParameterizedTest(name = "{0} calls/s, {1}, budget {2}, deadline {3}")
    @MethodSource("cases")
    void should_keep_the_delay_at_the_healthy_p95_when_one_replica_of_three_hangs(
            int callsPerSecond, PercentileDelay.Scope scope, boolean withBudget, boolean withDeadline) {
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        // the percentile's own estimate, without the warm-up bound before it (WarmUpDelayTest)
        PercentileDelay p95 = DelayPolicy.percentile(0.95)
                .scope(scope)
                .fallback(DelayPolicy.never())
                .build();
        long[] minMax = {Long.MAX_VALUE, Long.MIN_VALUE};
        long[] delays = {0};
        DelayPolicy watched = ctx -> {
            long d = p95.delayNanos(ctx);
            if (d >= 0) {
                minMax[0] = Math.min(minMax[0], d);
                minMax[1] = Math.max(minMax[1], d);
                delays[0]++;
            }
            return d;
        };
        HedgeConfig.Builder config = HedgeConfig.builder()
                .ticker(time)
                .scheduler(time)
                .idempotentByDefault(true)
                .delay(watched)
                .latencyTracker(LatencyTracker.builder().ticker(time).build())
                .budget(
                        withBudget
                                ? HedgeBudget.builder().ratio(0.05).ticker(time).build()
                                : HedgeBudget.unlimited());
        if (withDeadline) {
            config.deadline(Duration.ofSeconds(1));
        }
        HedgedExecutor ex = HedgedExecutor.of("hang", config.build());
        SplittableRandom rnd = new SplittableRandom(callsPerSecond * 31L + scope.ordinal());
        String[] replicas = {"r0", "r1", "r2"}; // r2 hangs
        long gap = 1_000 * MS / callsPerSecond;
        long calls = simulatedSeconds(callsPerSecond) * callsPerSecond;
        for (long i = 0; i < calls; i++) {
            int primary = rnd.nextInt(3);
            int other = rnd.nextInt(2);
            ex.executeAsync(ctx -> {
                int r = ctx.attemptNumber() == 1 ? primary : (primary + 1 + other) % 3;
                ctx.reportTarget(replicas[r]);
                CompletableFuture<String> f = new CompletableFuture<>();
                if (r != 2) {
                    double ms = MEDIAN_MS * Math.exp(SIGMA * rnd.nextGaussian());
                    var task = time.schedule(() -> f.complete("ok"), (long) (ms * MS));
                    ctx.onCancel(task::cancel);
                }
                return f;
            });
            time.advanceNanos(gap);
        }
        time.advance(Duration.ofSeconds(2));

        assertThat(delays[0]).as("delays computed").isPositive();
        assertThat(minMax[1] / HEALTHY_P95_NANOS)
                .as("largest delay / healthy p95")
                .isLessThanOrEqualTo(1.2);
        assertThat(minMax[0] / HEALTHY_P95_NANOS)
                .as("smallest delay / healthy p95")
                .isGreaterThanOrEqualTo(1 / 1.2);
    }
}

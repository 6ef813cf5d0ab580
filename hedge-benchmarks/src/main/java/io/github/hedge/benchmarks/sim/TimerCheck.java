package io.github.hedge.benchmarks.sim;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.spi.HedgeScheduler;
import io.github.hedge.core.spi.Schedulers;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@code timers} check, in real time on the default scheduler ({@code Schedulers.shared()}):
 *
 * <ol>
 *   <li>lateness: tasks scheduled 5 ms ahead, one about every millisecond; the p99 of (actual fire
 *       time - intended) / 5 ms must be at most 0.2;
 *   <li>no leak: {@code calls} hedged calls whose primary completes after {@code executeAsync}
 *       returned, so each one arms and cancels a 1 s hedge timer; afterwards the executor's timer
 *       queue must hold no more timers than calls in flight, and the scheduler no more tasks than
 *       that plus the queue's one armed task (which expires on its own at its due time).
 * </ol>
 */
public final class TimerCheck {
    private TimerCheck() {}

    /**
     * @param samples lateness samples
     * @param calls schedule-then-cancel calls
     * @return the result as one line of JSON
     * @throws InterruptedException if interrupted while waiting for timers
     */
    public static String run(int samples, long calls) throws InterruptedException {
        HedgeScheduler scheduler = Schedulers.shared();
        long delay = TimeUnit.MILLISECONDS.toNanos(5);

        // warm the scheduler and the JIT a little
        lateness(scheduler, delay, Math.min(200, samples));
        double[] ratio = lateness(scheduler, delay, samples);
        Arrays.sort(ratio);
        Percentiles lat = new Percentiles(ratio);
        double p99 = lat.at(0.99);

        HedgedExecutor executor = HedgedExecutor.of(
                "timers",
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofSeconds(1)))
                        .idempotentByDefault(true)
                        .scheduler(scheduler)
                        .build());
        long pendingBefore = scheduler.pendingTasks();
        long heapBefore = usedHeapAfterGc();
        long maxPending = 0;
        @SuppressWarnings("unchecked")
        CompletableFuture<Object>[] box = new CompletableFuture[1];
        long t0 = System.nanoTime();
        for (long i = 0; i < calls; i++) {
            CompletableFuture<Object> r = executor.executeAsync(CallOptions.idempotent(), ctx -> {
                CompletableFuture<Object> cf = new CompletableFuture<>();
                box[0] = cf;
                return cf;
            });
            box[0].complete(Boolean.TRUE);
            if (!r.isDone()) {
                throw new IllegalStateException("call " + i + " did not complete");
            }
            if ((i & 0xFFFFF) == 0) {
                maxPending = Math.max(maxPending, scheduler.pendingTasks());
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long pendingAfter = scheduler.pendingTasks();
        long queuedAfter = executor.stats().pendingTimers();
        long inFlight = executor.stats().inFlightCalls();
        long heapAfter = usedHeapAfterGc();
        boolean cancelOk = queuedAfter <= inFlight && pendingAfter - pendingBefore <= inFlight + 1;

        Json j = new Json().beginObject();
        j.field("scheduler", scheduler.getClass().getName());
        j.beginObject("lateness")
                .field("delay_ms", 5.0)
                .field("samples", samples)
                .field("p50_ratio", Percentiles.round(lat.at(0.5)))
                .field("p90_ratio", Percentiles.round(lat.at(0.9)))
                .field("p99_ratio", Percentiles.round(p99))
                .field("p999_ratio", Percentiles.round(lat.at(0.999)))
                .field("max_ratio", Percentiles.round(lat.max()))
                .field("target_p99_ratio", 0.2)
                .field("met", p99 <= 0.2)
                .endObject();
        j.beginObject("schedule_cancel")
                .field("calls", calls)
                .field("seconds", Percentiles.round(seconds))
                .field("ns_per_call", Percentiles.round(seconds * 1e9 / Math.max(1, calls)))
                .field("timers_armed", executor.stats().calls())
                .field("pending_before", pendingBefore)
                .field("pending_after", pendingAfter)
                .field("executor_timers_queued_after", queuedAfter)
                .field("max_pending_sampled", maxPending)
                .field("in_flight_after", inFlight)
                .field("heap_used_before_mb", Percentiles.round(heapBefore / 1048576.0))
                .field("heap_used_after_mb", Percentiles.round(heapAfter / 1048576.0))
                .field("met", cancelOk)
                .endObject();
        return j.endObject().toString();
    }

    private static double[] lateness(HedgeScheduler scheduler, long delayNanos, int n) throws InterruptedException {
        double[] ratio = new double[n];
        CountDownLatch done = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            final int k = i;
            final long intended = System.nanoTime() + delayNanos;
            scheduler.schedule(
                    () -> {
                        ratio[k] = Math.max(0, System.nanoTime() - intended) / (double) delayNanos;
                        done.countDown();
                    },
                    delayNanos);
            LockSupport.parkNanos(1_000_000);
        }
        if (!done.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("timers did not fire within 30 s");
        }
        return ratio;
    }

    private static long usedHeapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return rt.totalMemory() - rt.freeMemory();
    }
}

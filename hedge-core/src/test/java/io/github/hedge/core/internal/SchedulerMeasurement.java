package io.github.hedge.core.internal;

import io.github.hedge.core.spi.ClosableHedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * A quick, honest measurement of the built-in schedulers, used to pick {@code Schedulers.shared()}.
 * Not a test (surefire does not run it); run it by hand:
 *
 * <pre>{@code
 * ./mvnw -o -q test-compile dependency:build-classpath -pl hedge-core -Dmdep.outputFile=/tmp/cp.txt
 * java -cp hedge-core/target/classes:hedge-core/target/test-classes:$(cat /tmp/cp.txt) \
 *     io.github.hedge.core.internal.SchedulerMeasurement
 * }</pre>
 *
 * <p>It measures (1) the cost of schedule followed by cancel before the task fires, the common
 * hedging case (the primary answers before the hedge delay), in ns per schedule+cancel pair seen
 * by each thread, with 1 and 2 threads and 1 ms and 5 ms delays, both with the cancel right away
 * and with 1,000 timers outstanding per thread; (2) the firing lateness of 5 ms tasks (actual
 * minus intended run time, real time), both staggered (one every 250 µs, about 20 in flight) and
 * one at a time (idle scheduler). Plain System.nanoTime loops with warm-up, not JMH: expect
 * +-20%.
 */
public final class SchedulerMeasurement {
    private static final Runnable NOOP = () -> {};

    private SchedulerMeasurement() {}

    public static void main(String[] args) throws Exception {
        List<String> names = List.of("threadPool", "wheel-1ms", "wheel-100us");
        List<Supplier<ClosableHedgeScheduler>> factories = List.of(
                ThreadPoolScheduler::new,
                HashedWheelScheduler::new,
                () -> new HashedWheelScheduler(Duration.ofNanos(100_000), 512));
        System.out.printf(
                "JVM %s, %d CPUs%n",
                System.getProperty("java.vm.version"), Runtime.getRuntime().availableProcessors());
        for (int i = 0; i < names.size(); i++) {
            try (ClosableHedgeScheduler s = factories.get(i).get()) {
                for (int outstanding : new int[] {0, 1000}) {
                    for (int threads : new int[] {1, 2}) {
                        for (long delayMs : new long[] {1, 5}) {
                            double ns = scheduleCancel(s, threads, TimeUnit.MILLISECONDS.toNanos(delayMs), outstanding);
                            System.out.printf(
                                    Locale.ROOT,
                                    "%-12s schedule+cancel threads=%d delay=%dms outstanding=%4d: %7.1f ns/op per thread%n",
                                    names.get(i),
                                    threads,
                                    delayMs,
                                    outstanding,
                                    ns);
                        }
                    }
                }
                if (s.pendingTasks() != 0) {
                    System.out.println("  LEAK: pending=" + s.pendingTasks());
                }
                lateness(names.get(i), s, "staggered", 8_000, 250_000);
                lateness(names.get(i), s, "one-at-a-time", 600, -1);
            }
        }
    }

    /** @return median over rounds of ns per schedule+cancel pair, as seen by one thread */
    private static double scheduleCancel(ClosableHedgeScheduler s, int threads, long delayNanos, int outstanding)
            throws Exception {
        int ops = 500_000;
        int rounds = 7;
        double[] results = new double[rounds];
        for (int r = -3; r < rounds; r++) { // 3 warm-up rounds
            CyclicBarrier barrier = new CyclicBarrier(threads);
            long[] elapsed = new long[threads];
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                Thread th = new Thread(() -> {
                    ScheduledTask[] ring = new ScheduledTask[Math.max(1, outstanding)];
                    try {
                        barrier.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    long t0 = System.nanoTime();
                    if (outstanding == 0) {
                        for (int k = 0; k < ops; k++) {
                            s.schedule(NOOP, delayNanos).cancel();
                        }
                    } else {
                        for (int k = 0; k < ops; k++) {
                            int slot = k % outstanding;
                            if (ring[slot] != null) {
                                ring[slot].cancel();
                            }
                            ring[slot] = s.schedule(NOOP, delayNanos);
                        }
                    }
                    elapsed[id] = System.nanoTime() - t0;
                    for (ScheduledTask task : ring) {
                        if (task != null) {
                            task.cancel();
                        }
                    }
                });
                ts.add(th);
                th.start();
            }
            for (Thread th : ts) {
                th.join();
            }
            if (r >= 0) {
                results[r] = Arrays.stream(elapsed).average().orElseThrow() / ops;
            }
        }
        Arrays.sort(results);
        return results[rounds / 2];
    }

    private static void lateness(String name, ClosableHedgeScheduler s, String mode, int samples, long spacingNanos)
            throws InterruptedException {
        long delay = TimeUnit.MILLISECONDS.toNanos(5);
        long[] late = new long[samples];
        CountDownLatch done = new CountDownLatch(samples);
        for (int i = 0; i < samples; i++) {
            int id = i;
            long intended = System.nanoTime() + delay;
            s.schedule(
                    () -> {
                        late[id] = System.nanoTime() - intended;
                        done.countDown();
                    },
                    delay);
            if (spacingNanos > 0) {
                LockSupport.parkNanos(spacingNanos);
            } else {
                while (done.getCount() > samples - id - 1) {
                    LockSupport.parkNanos(100_000);
                }
                LockSupport.parkNanos((long) (Math.random() * 3_000_000)); // random phase vs the wheel
            }
        }
        if (!done.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("tasks did not fire");
        }
        Arrays.sort(late);
        System.out.printf(
                Locale.ROOT,
                "%-12s lateness 5ms %-14s n=%d: min %6.1f  p50 %6.1f  p90 %6.1f  p99 %6.1f  max %7.1f us%n",
                name,
                mode,
                samples,
                late[0] / 1e3,
                late[samples / 2] / 1e3,
                late[(int) (samples * 0.9)] / 1e3,
                late[(int) (samples * 0.99)] / 1e3,
                late[samples - 1] / 1e3);
    }
}

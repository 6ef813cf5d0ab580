package io.github.hedge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.spi.ClosableHedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every built-in scheduler must do. Real time, but never asserts how long anything took
 * (latches with generous timeouts), only that nothing runs early.
 */
abstract class HedgeSchedulerContract {
    static final long TIMEOUT_SECONDS = 30;

    ClosableHedgeScheduler scheduler;

    abstract ClosableHedgeScheduler create();

    @BeforeEach
    void setUp() {
        scheduler = create();
    }

    @AfterEach
    void tearDown() {
        scheduler.close();
    }

    @Test
    void should_run_a_task_when_its_delay_has_passed() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        long delay = TimeUnit.MILLISECONDS.toNanos(5);
        long start = System.nanoTime();
        AtomicReference<Long> ranAt = new AtomicReference<>();

        scheduler.schedule(
                () -> {
                    ranAt.set(System.nanoTime());
                    ran.countDown();
                },
                delay);

        assertThat(ran.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(ranAt.get() - start).isGreaterThanOrEqualTo(delay); // never early
        awaitPending(0);
    }

    @Test
    void should_run_a_task_when_its_delay_is_zero_or_negative() throws Exception {
        CountDownLatch ran = new CountDownLatch(2);

        scheduler.schedule(ran::countDown, 0);
        scheduler.schedule(ran::countDown, -5);

        assertThat(ran.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void should_run_every_task_when_many_threads_schedule_at_once() throws Exception {
        int threads = 4;
        int perThread = 2_500;
        CountDownLatch ran = new CountDownLatch(threads * perThread);
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread p = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    long delay = ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(20));
                    scheduler.schedule(ran::countDown, delay);
                }
            });
            producers.add(p);
            p.start();
        }
        for (Thread p : producers) {
            p.join();
        }

        assertThat(ran.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        awaitPending(0);
    }

    @Test
    void should_not_run_a_task_when_cancelled_before_its_delay() throws Exception {
        AtomicBoolean cancelledRan = new AtomicBoolean();
        CountDownLatch later = new CountDownLatch(1);

        // 300 ms: far more than a loaded machine may deschedule this thread between the two lines
        ScheduledTask task = scheduler.schedule(() -> cancelledRan.set(true), TimeUnit.MILLISECONDS.toNanos(300));
        assertThat(task.cancel()).isTrue();
        assertThat(task.cancel()).isFalse(); // idempotent
        scheduler.schedule(later::countDown, TimeUnit.MILLISECONDS.toNanos(400)); // after the cancelled one was due

        assertThat(later.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(cancelledRan).isFalse();
    }

    @Test
    void should_not_cancel_a_task_when_it_has_already_run() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        ScheduledTask task = scheduler.schedule(ran::countDown, 0);
        assertThat(ran.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        awaitPending(0);

        assertThat(task.cancel()).isFalse();
        assertThat(scheduler.pendingTasks()).isZero();
    }

    @Test
    void should_count_pending_tasks_when_scheduled() {
        ScheduledTask a = scheduler.schedule(() -> {}, TimeUnit.SECONDS.toNanos(60));
        ScheduledTask b = scheduler.schedule(() -> {}, TimeUnit.SECONDS.toNanos(60));
        assertThat(scheduler.pendingTasks()).isEqualTo(2);

        a.cancel();
        assertThat(scheduler.pendingTasks()).isEqualTo(1);
        b.cancel();
        assertThat(scheduler.pendingTasks()).isZero();
    }

    @Test
    void should_return_pending_to_zero_when_100k_tasks_are_scheduled_and_cancelled() throws Exception {
        for (int i = 0; i < 100_000; i++) {
            scheduler
                    .schedule(() -> {}, TimeUnit.MILLISECONDS.toNanos(1 + i % 10))
                    .cancel();
        }
        awaitPending(0);

        // and with many outstanding at once, from two threads
        Runnable burst = () -> {
            ScheduledTask[] tasks = new ScheduledTask[50_000];
            for (int i = 0; i < tasks.length; i++) {
                tasks[i] = scheduler.schedule(() -> {}, TimeUnit.SECONDS.toNanos(5 + i % 100));
            }
            for (ScheduledTask t : tasks) {
                t.cancel();
            }
        };
        Thread other = new Thread(burst);
        other.start();
        burst.run();
        other.join();

        assertThat(scheduler.pendingTasks()).isZero();
    }

    @Test
    void should_not_retain_a_task_when_it_is_cancelled() throws Exception {
        WeakReference<Runnable> ref = scheduleAndCancelUnreachableTask();

        await().atMost(Duration.ofSeconds(TIMEOUT_SECONDS))
                .pollInterval(Duration.ofMillis(20))
                .untilAsserted(() -> {
                    System.gc();
                    assertThat(ref.get())
                            .as("the cancelled task, once collected")
                            .isNull();
                });
    }

    private WeakReference<Runnable> scheduleAndCancelUnreachableTask() {
        Runnable task = new Runnable() {
            final byte[] payload = new byte[1 << 20];

            @Override
            public void run() {
                payload[0]++;
            }
        };
        scheduler.schedule(task, TimeUnit.SECONDS.toNanos(60)).cancel();
        return new WeakReference<>(task);
    }

    @Test
    void should_keep_running_tasks_when_one_throws() throws Exception {
        CountDownLatch threw = new CountDownLatch(1);
        CountDownLatch after = new CountDownLatch(1);
        scheduler.schedule(
                () -> {
                    threw.countDown();
                    throw new IllegalStateException("boom (expected by the test)");
                },
                0);
        assertThat(threw.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        scheduler.schedule(
                () -> {
                    throw new AssertionError("an Error too (expected by the test)");
                },
                0);

        scheduler.schedule(after::countDown, TimeUnit.MILLISECONDS.toNanos(5));

        assertThat(after.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        awaitPending(0);
    }

    @Test
    void should_run_tasks_on_a_daemon_thread_when_fired() throws Exception {
        AtomicReference<Thread> thread = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        scheduler.schedule(
                () -> {
                    thread.set(Thread.currentThread());
                    ran.countDown();
                },
                0);

        assertThat(ran.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(thread.get().isDaemon()).isTrue();
        assertThat(thread.get().getName()).startsWith("hedge-scheduler-");
    }

    @Test
    void should_stop_its_thread_and_discard_pending_tasks_when_closed() throws Exception {
        AtomicReference<Thread> thread = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        scheduler.schedule(
                () -> {
                    thread.set(Thread.currentThread());
                    ran.countDown();
                },
                0);
        assertThat(ran.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        AtomicBoolean discardedRan = new AtomicBoolean();
        // due long after close(): a test thread descheduled between the two lines cannot let it run first
        ScheduledTask discarded = scheduler.schedule(() -> discardedRan.set(true), TimeUnit.SECONDS.toNanos(60));

        scheduler.close();

        thread.get().join(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
        assertThat(thread.get().isAlive()).isFalse();
        assertThat(scheduler.pendingTasks()).isZero();
        assertThat(discarded.cancel()).isFalse();
        assertThat(discardedRan).isFalse();
        assertThatThrownBy(() -> scheduler.schedule(() -> {}, 0)).isInstanceOf(RejectedExecutionException.class);
        scheduler.close(); // idempotent
    }

    @Test
    void should_stop_when_closed_from_one_of_its_own_tasks() throws Exception {
        AtomicReference<Thread> thread = new AtomicReference<>();
        CountDownLatch closed = new CountDownLatch(1);
        scheduler.schedule(
                () -> {
                    thread.set(Thread.currentThread());
                    scheduler.close();
                    closed.countDown();
                },
                0);

        assertThat(closed.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        thread.get().join(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
        assertThat(thread.get().isAlive()).isFalse();
    }

    @Test
    void should_reject_a_null_task_when_scheduled() {
        assertThatThrownBy(() -> scheduler.schedule(null, 0))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("task must not be null");
    }

    void awaitPending(long expected) {
        await().atMost(Duration.ofSeconds(TIMEOUT_SECONDS))
                .pollInterval(Duration.ofMillis(1))
                .untilAsserted(() ->
                        assertThat(scheduler.pendingTasks()).as("pending tasks").isEqualTo(expected));
    }
}

package io.github.hedge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.spi.ClosableHedgeScheduler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class HashedWheelSchedulerTest extends HedgeSchedulerContract {
    @Override
    ClosableHedgeScheduler create() {
        return new HashedWheelScheduler();
    }

    @Test
    void should_run_a_task_when_its_delay_spans_several_turns_of_the_wheel() throws Exception {
        try (HashedWheelScheduler small = new HashedWheelScheduler(Duration.ofMillis(1), 4)) {
            CountDownLatch ran = new CountDownLatch(2);
            long delay = TimeUnit.MILLISECONDS.toNanos(30); // about 7 turns of a 4-slot, 1 ms wheel
            long start = System.nanoTime();
            AtomicLong ranAt = new AtomicLong();
            small.schedule(
                    () -> {
                        ranAt.set(System.nanoTime());
                        ran.countDown();
                    },
                    delay);
            small.schedule(ran::countDown, TimeUnit.MILLISECONDS.toNanos(2));

            assertThat(ran.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(ranAt.get() - start).isGreaterThanOrEqualTo(delay); // not a turn early
            assertThat(small.pendingTasks()).isZero();
        }
    }

    @Test
    void should_park_its_thread_when_nothing_is_pending_and_wake_when_a_task_arrives() throws Exception {
        AtomicReference<Thread> thread = new AtomicReference<>();
        CountDownLatch first = new CountDownLatch(1);
        scheduler.schedule(
                () -> {
                    thread.set(Thread.currentThread());
                    first.countDown();
                },
                0);
        assertThat(first.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();

        // parked without deadline (WAITING), not ticking (TIMED_WAITING) or spinning (RUNNABLE)
        await().atMost(Duration.ofSeconds(TIMEOUT_SECONDS))
                .pollInterval(Duration.ofMillis(5))
                .untilAsserted(() -> assertThat(thread.get().getState()).isEqualTo(Thread.State.WAITING));

        CountDownLatch second = new CountDownLatch(1);
        long delay = TimeUnit.MILLISECONDS.toNanos(3);
        long start = System.nanoTime();
        AtomicLong ranAt = new AtomicLong();
        scheduler.schedule(
                () -> {
                    ranAt.set(System.nanoTime());
                    second.countDown();
                },
                delay);
        assertThat(second.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(ranAt.get() - start).isGreaterThanOrEqualTo(delay);
    }

    @Test
    void should_reject_a_tick_when_out_of_range() {
        assertThatThrownBy(() -> new HashedWheelScheduler(Duration.ofNanos(1), 512))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tick must be in [PT0.00001S, PT1S], was PT0.000000001S");
        assertThatThrownBy(() -> new HashedWheelScheduler(Duration.ZERO, 512))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tick must be > 0, was PT0S");
        assertThatThrownBy(() -> new HashedWheelScheduler(Duration.ofMillis(1), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("wheelSize must be in [1, 1048576], was 0");
    }
}

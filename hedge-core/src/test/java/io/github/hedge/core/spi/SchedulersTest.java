package io.github.hedge.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class SchedulersTest {
    @Test
    void should_return_one_unclosable_instance_when_shared_is_called_twice() {
        HedgeScheduler shared = Schedulers.shared();

        assertThat(Schedulers.shared()).isSameAs(shared);
        assertThat(shared).isNotInstanceOf(AutoCloseable.class);
    }

    @Test
    void should_run_tasks_on_a_daemon_thread_when_shared() throws Exception {
        AtomicReference<Thread> thread = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);

        ScheduledTask cancelled = Schedulers.shared().schedule(() -> {}, TimeUnit.SECONDS.toNanos(60));
        Schedulers.shared()
                .schedule(
                        () -> {
                            thread.set(Thread.currentThread());
                            ran.countDown();
                        },
                        TimeUnit.MILLISECONDS.toNanos(1));

        assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(thread.get().isDaemon()).isTrue();
        assertThat(cancelled.cancel()).isTrue();
    }

    @Test
    void should_return_new_owned_instances_when_asked_for_a_thread_pool_or_a_wheel() throws Exception {
        try (ClosableHedgeScheduler pool = Schedulers.threadPool();
                ClosableHedgeScheduler wheel = Schedulers.hashedWheel(Duration.ofMillis(1))) {
            assertThat(pool).isNotSameAs(wheel).isNotSameAs(Schedulers.shared());
            CountDownLatch ran = new CountDownLatch(2);
            pool.schedule(ran::countDown, 0);
            wheel.schedule(ran::countDown, 0);
            assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
        }
    }
}

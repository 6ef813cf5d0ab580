package io.github.hedge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.spi.ClosableHedgeScheduler;
import io.github.hedge.core.spi.ScheduledTask;
import io.github.hedge.core.spi.Schedulers;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/** The executor's timer queue in virtual time: exact firing, one scheduler task, eager unlinking. */
class TimerQueueTest {
    private static final long MS = 1_000_000L;

    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final TimerQueue queue = new TimerQueue(time, time);
    private final List<String> fired = new ArrayList<>();

    private ScheduledTask at(long ms, String name) {
        return queue.schedule(() -> fired.add(name + "@" + time.nanoTime() / MS), ms * MS);
    }

    @Test
    void should_fire_each_timer_at_its_own_due_time_when_delays_arrive_out_of_order() {
        at(10, "a");
        at(30, "c");
        at(5, "early"); // an earlier timer after later ones: the queue re-arms for it
        at(20, "b");
        assertThat(time.pendingTasks())
                .as("one scheduler task for the whole queue")
                .isEqualTo(1);
        time.advanceNanos(100 * MS);
        assertThat(fired).containsExactly("early@5", "a@10", "b@20", "c@30");
        assertThat(queue.size()).isZero();
        assertThat(time.pendingTasks()).isZero();
    }

    @Test
    void should_unlink_at_once_when_cancelled_and_let_the_armed_task_expire() {
        ScheduledTask a = at(10, "a");
        ScheduledTask b = at(20, "b");
        assertThat(a.cancel()).isTrue();
        assertThat(a.cancel()).isFalse();
        assertThat(queue.size()).isEqualTo(1);
        time.advanceNanos(10 * MS);
        assertThat(fired).isEmpty();
        assertThat(time.pendingTasks()).as("re-armed for b").isEqualTo(1);
        assertThat(b.cancel()).isTrue();
        time.runUntilIdle();
        assertThat(fired).isEmpty();
        assertThat(time.pendingTasks()).isZero();
        assertThat(queue.size()).isZero();
    }

    @Test
    void should_fire_timers_with_equal_due_in_scheduling_order() {
        at(10, "1");
        at(10, "2");
        at(10, "3");
        time.advanceNanos(10 * MS);
        assertThat(fired).containsExactly("1@10", "2@10", "3@10");
    }

    @Test
    void should_not_queue_when_scheduler_refuses() {
        ClosableHedgeScheduler closed = Schedulers.threadPool();
        closed.close();
        TimerQueue refused = new TimerQueue(closed, System::nanoTime);
        assertThatThrownBy(() -> refused.schedule(() -> {}, 1)).isInstanceOf(RejectedExecutionException.class);
        assertThat(refused.size()).isZero();
    }

    @Test
    void should_keep_firing_later_timers_when_one_throws() {
        queue.schedule(
                () -> {
                    throw new IllegalStateException("boom");
                },
                5 * MS);
        at(5, "after");
        time.advanceNanos(5 * MS);
        assertThat(fired).containsExactly("after@5");
    }
}

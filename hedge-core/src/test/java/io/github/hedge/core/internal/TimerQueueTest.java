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

    @Test
    void should_fire_in_due_order_when_mixed_delays_and_cancellations_interleave() {
        // per-call deadlines differ per call: thousands of long timers, then short ones, in random mix
        java.util.Random random = new java.util.Random(7);
        List<long[]> expected = new ArrayList<>(); // {due, seq}
        List<ScheduledTask> handles = new ArrayList<>();
        List<Long> firedAt = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            long delayMs = random.nextInt(4) == 0 ? 50 : 10_000 + random.nextInt(3);
            long due = time.nanoTime() + delayMs * MS;
            handles.add(queue.schedule(() -> firedAt.add(time.nanoTime()), delayMs * MS));
            expected.add(new long[] {due, i});
            if (i % 7 == 3) {
                int victim = random.nextInt(handles.size());
                if (handles.get(victim).cancel()) {
                    expected.set(victim, null);
                }
            }
            if (i % 1000 == 999) {
                time.advanceNanos(MS); // some fire while others are added
            }
        }
        time.runUntilIdle();
        List<Long> wanted = expected.stream()
                .filter(java.util.Objects::nonNull)
                .map(e -> e[0])
                .sorted()
                .toList();
        assertThat(firedAt).isSorted().isEqualTo(wanted);
        assertThat(queue.size()).isZero();
        assertThat(time.pendingTasks()).isZero();
    }

    @Test
    void should_rearm_when_the_armed_task_was_discarded_by_a_closed_scheduler() {
        ClosableHedgeScheduler pool = Schedulers.threadPool();
        TimerQueue q = new TimerQueue(pool, time);
        List<String> discarded = new ArrayList<>();
        q.schedule(() -> {}, () -> discarded.add("first"), 10_000 * MS); // arms the pool for 10 s
        pool.close(); // drops that task: nothing will ever fire it, and the queue is told
        assertThat(discarded).containsExactly("first");
        assertThat(q.size()).isZero();
        // a later timer must not trust the dead arming: the scheduler's refusal reaches its caller
        assertThatThrownBy(() -> q.schedule(() -> {}, 20_000 * MS)).isInstanceOf(RejectedExecutionException.class);
        assertThat(q.size()).isZero();
    }

    @Test
    void should_trust_no_armed_task_that_a_scheduler_of_its_own_reports_as_no_longer_pending() {
        // a user scheduler that drops tasks silently but reports them through isDropped()
        List<Runnable> accepted = new ArrayList<>();
        boolean[] closed = {false};
        io.github.hedge.core.spi.HedgeScheduler own = new io.github.hedge.core.spi.HedgeScheduler() {
            @Override
            public ScheduledTask schedule(Runnable task, long delayNanos) {
                if (closed[0]) {
                    throw new RejectedExecutionException("closed");
                }
                accepted.add(task);
                return new ScheduledTask() {
                    @Override
                    public boolean cancel() {
                        return false;
                    }

                    @Override
                    public boolean isDropped() {
                        return closed[0];
                    }
                };
            }

            @Override
            public long pendingTasks() {
                return closed[0] ? 0 : accepted.size();
            }
        };
        TimerQueue q = new TimerQueue(own, time);
        q.schedule(() -> {}, 10_000 * MS);
        closed[0] = true;
        assertThatThrownBy(() -> q.schedule(() -> {}, 20_000 * MS)).isInstanceOf(RejectedExecutionException.class);
    }
}

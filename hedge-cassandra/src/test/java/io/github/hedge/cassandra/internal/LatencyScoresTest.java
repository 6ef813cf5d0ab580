package io.github.hedge.cassandra.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LatencyScoresTest {
    private final AtomicLong now = new AtomicLong();
    private final LatencyScores<String> scores =
            new LatencyScores<>(2.0, TimeUnit.MILLISECONDS.toNanos(100), TimeUnit.SECONDS.toNanos(10), 5, now::get);

    private void record(String node, long millis) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        scores.record(node, TimeUnit.MILLISECONDS.toNanos(millis));
    }

    @Test
    void should_put_a_slow_node_last_when_it_has_enough_measurements() {
        for (int i = 0; i < 5; i++) {
            record("a", 2);
            record("b", 2);
            assertThat(scores.isExcluded("c")).isFalse(); // not enough measurements yet
            record("c", 250);
        }
        assertThat(scores.isExcluded("c")).isTrue();
        assertThat(scores.order(List.of("c", "a", "b"))).containsExactly("a", "b", "c");
    }

    @Test
    void should_keep_a_healthy_node_when_one_answer_comes_from_its_heavy_tail() {
        for (int i = 0; i < 200; i++) {
            record("a", 3);
            record("b", 3);
            record("c", i == 0 || i % 50 == 49 ? 400 : 3);
            assertThat(scores.isExcluded("c")).as("after %d rounds", i).isFalse();
        }
    }

    @Test
    void should_try_an_excluded_node_again_when_the_retry_period_passed() {
        for (int i = 0; i < 5; i++) {
            record("a", 2);
            record("b", 2);
            record("c", 250);
        }
        assertThat(scores.isExcluded("c")).isTrue();
        for (int i = 0; i < 11_000; i++) { // 11 s of measurements of the others only
            record(i % 2 == 0 ? "a" : "b", 2);
        }
        assertThat(scores.isExcluded("c")).isFalse(); // probed again
        for (int i = 0; i < 5; i++) {
            record("c", 2); // it healed
        }
        assertThat(scores.isExcluded("c")).isFalse();
        assertThat(scores.averageNanos("c")).isEqualTo(TimeUnit.MILLISECONDS.toNanos(2));
    }

    private void warmUp() {
        for (int i = 0; i < 5; i++) {
            record("a", 2);
            record("b", 2);
            record("c", 2);
        }
    }

    @Test
    void should_put_a_stalled_node_last_when_it_answers_nothing_with_attempts_in_flight() {
        warmUp();
        scores.started("c");
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(8)); // 4x its 2 ms: not yet
        assertThat(scores.isStalled("c")).isFalse();
        scores.started("c");
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        assertThat(scores.isStalled("c")).isTrue();
        assertThat(scores.isExcluded("c")).isTrue();
        assertThat(scores.order(List.of("c", "a", "b"))).containsExactly("a", "b", "c");

        scores.ended("c"); // it answered: not stalled, whatever is still in flight
        assertThat(scores.isStalled("c")).isFalse();
        assertThat(scores.order(List.of("c", "a", "b"))).containsExactly("c", "a", "b");
    }

    @Test
    void should_put_a_stalled_node_behind_a_slow_one_when_both_are_excluded() {
        for (int i = 0; i < 5; i++) {
            record("a", 2);
            record("b", 2);
            record("c", 2);
            record("d", 250);
        }
        scores.started("c");
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(20));
        assertThat(scores.order(List.of("c", "d", "a", "b"))).containsExactly("a", "b", "d", "c");
    }

    @Test
    void should_not_call_a_node_stalled_when_it_has_nothing_in_flight_or_keeps_answering() {
        warmUp();
        now.addAndGet(TimeUnit.SECONDS.toNanos(1)); // idle for a long time: not a stall
        assertThat(scores.isStalled("c")).isFalse();
        scores.started("c"); // the first attempt after the silence starts the clock afresh
        assertThat(scores.isStalled("c")).isFalse();
        for (int i = 0; i < 100; i++) { // busy, answering one of its attempts every millisecond
            scores.started("c");
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
            scores.ended("c");
            assertThat(scores.isStalled("c")).isFalse();
        }
    }
}

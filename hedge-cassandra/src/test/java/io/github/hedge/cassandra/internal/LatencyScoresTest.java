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
}

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
    void should_rank_a_stalled_node_by_how_long_it_has_been_silent_when_slow_nodes_are_excluded_too() {
        for (int i = 0; i < 5; i++) {
            record("a", 2);
            record("b", 2);
            record("c", 2);
            record("d", 250);
        }
        scores.started("c");
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(20)); // silent 20 ms: behind the healthy, before the 250 ms node
        assertThat(scores.order(List.of("c", "d", "a", "b"))).containsExactly("a", "b", "c", "d");
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(300)); // silent 320 ms: now the slowest known
        assertThat(scores.order(List.of("c", "d", "a", "b"))).containsExactly("a", "b", "d", "c");
    }

    @Test
    void should_put_at_most_one_node_of_three_at_the_back_when_two_are_excluded() {
        for (int i = 0; i < 5; i++) {
            record("a", 2);
            record("b", 2);
            record("c", 2);
        }
        // c loses five races in a row (excluded), b stalls with an attempt in flight (excluded)
        for (int i = 0; i < 5; i++) {
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
            scores.recordCensored("c", TimeUnit.MILLISECONDS.toNanos(3));
        }
        scores.started("b");
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(50)); // silent 50 ms: the slowest known
        assertThat(scores.isExcluded("b")).isTrue();
        assertThat(scores.isExcluded("c")).isTrue();

        assertThat(scores.order(List.of("b", "c", "a")))
                .as("a alone cannot take every first execution: c keeps its place, b goes last")
                .containsExactly("c", "a", "b");
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

    private void recordCensored(String node, long millis) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        scores.recordCensored(node, TimeUnit.MILLISECONDS.toNanos(millis));
    }

    @Test
    void should_not_lower_a_score_when_a_measurement_is_censored_below_it() {
        for (int i = 0; i < 5; i++) {
            record("a", 2);
            record("b", 2);
            record("c", 250);
        }
        double before = scores.averageNanos("c");
        recordCensored("c", 1); // cancelled after 1 ms: it took at least 1 ms, nothing more
        assertThat(scores.averageNanos("c")).isEqualTo(before);
        assertThat(scores.isExcluded("c")).isTrue();
    }

    @Test
    void should_raise_a_score_when_a_measurement_is_censored_above_it() {
        warmUp();
        double before = scores.averageNanos("c");
        recordCensored("c", 5); // at least 5 ms against its usual 2 ms
        assertThat(scores.averageNanos("c")).isGreaterThan(before);
    }

    @Test
    void should_exclude_a_node_when_it_loses_five_races_in_a_row_each_cut_short_below_the_threshold() {
        warmUp();
        for (int i = 0; i < LatencyScores.LOST_IN_A_ROW; i++) {
            assertThat(scores.isExcluded("c")).as("after %d lost races", i).isFalse();
            record("a", 2);
            record("b", 2);
            recordCensored("c", 3); // cancelled at a 3 ms hedge delay: under 2 x 2 ms
        }
        assertThat(scores.averageNanos("c")).isLessThan(2 * TimeUnit.MILLISECONDS.toNanos(2));
        assertThat(scores.isExcluded("c")).isTrue();
        assertThat(scores.order(List.of("c", "a", "b"))).containsExactly("a", "b", "c");
    }

    @Test
    void should_not_count_a_lost_race_when_the_attempt_was_cancelled_before_the_node_usually_answers() {
        warmUp();
        for (int i = 0; i < 100; i++) {
            // hedges sent just as the primary answered, cancelled within a millisecond: the node's
            // usual 2 ms had not passed
            recordCensored("c", 1);
            record("a", 2);
            record("b", 2);
        }
        assertThat(scores.isExcluded("c")).isFalse();
        assertThat(scores.order(List.of("c", "a", "b"))).containsExactly("c", "a", "b");
    }

    @Test
    void should_keep_a_node_when_an_answer_comes_between_its_lost_races() {
        warmUp();
        for (int round = 0; round < 100; round++) {
            for (int i = 0; i < LatencyScores.LOST_IN_A_ROW - 1; i++) {
                recordCensored("c", 3);
            }
            record("c", 2);
            record("a", 2);
            record("b", 2);
            assertThat(scores.isExcluded("c")).as("round %d", round).isFalse();
        }
    }

    @Test
    void should_keep_an_excluded_node_out_when_its_probe_is_cancelled_and_take_it_back_when_a_probe_answers() {
        warmUp();
        for (int i = 0; i < LatencyScores.LOST_IN_A_ROW; i++) {
            recordCensored("c", 3);
        }
        assertThat(scores.isExcluded("c")).isTrue();
        now.addAndGet(TimeUnit.SECONDS.toNanos(11)); // the retry period passed: probed again
        assertThat(scores.isExcluded("c")).isFalse();
        recordCensored("c", 3); // the probe lost its race too: out for another retry period
        assertThat(scores.isExcluded("c")).isTrue();
        now.addAndGet(TimeUnit.SECONDS.toNanos(11));
        assertThat(scores.isExcluded("c")).isFalse();
        record("a", 2);
        record("b", 2);
        record("c", 2); // the next probe answered: the node healed
        assertThat(scores.isExcluded("c")).isFalse();
    }

    @Test
    void should_exclude_a_node_when_the_driver_gives_up_on_it_five_times_in_a_row() {
        warmUp();
        for (int i = 0; i < LatencyScores.LOST_IN_A_ROW; i++) {
            recordCensored("c", 2_000); // request timeouts: censored at 2 s
        }
        assertThat(scores.isExcluded("c")).isTrue();
    }
}

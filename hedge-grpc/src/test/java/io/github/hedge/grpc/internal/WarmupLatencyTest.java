package io.github.hedge.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class WarmupLatencyTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final WarmupLatency warmup = new WarmupLatency(4, 4 * MS);

    @Test
    void should_be_the_min_delay_when_no_attempt_has_succeeded() {
        assertThat(warmup.delayNanos()).isEqualTo(4 * MS);
    }

    @Test
    void should_be_the_factor_times_the_lower_median_backend_when_one_of_three_is_slow() {
        for (int i = 0; i < 10; i++) {
            warmup.record("a", 2 * MS);
            warmup.record("b", 3 * MS);
            warmup.record("slow", 900 * MS);
        }

        assertThat(warmup.delayNanos()).isEqualTo(4 * 3 * MS);
    }

    @Test
    void should_be_the_faster_backend_when_there_are_two() {
        warmup.record("a", 5 * MS);
        warmup.record("slow", 500 * MS);

        assertThat(warmup.delayNanos()).isEqualTo(4 * 5 * MS);
    }

    @Test
    void should_outvote_a_backends_first_sample_when_its_next_ones_are_fast() {
        warmup.record("a", 80 * MS); // the connection's cost, say
        assertThat(warmup.delayNanos()).isEqualTo(4 * 80 * MS);

        warmup.record("a", 2 * MS);

        assertThat(warmup.delayNanos()).isEqualTo(4 * 2 * MS);
    }

    @Test
    void should_follow_the_last_samples_of_a_backend_when_its_latency_changes() {
        for (int i = 0; i < 20; i++) {
            warmup.record("a", 2 * MS);
        }
        for (int i = 0; i < WarmupLatency.SAMPLES_PER_BACKEND; i++) {
            warmup.record("a", 10 * MS);
        }

        assertThat(warmup.delayNanos()).isEqualTo(4 * 10 * MS);
    }

    @Test
    void should_never_go_below_the_min_delay_when_backends_are_faster() {
        warmup.record("a", 100_000);
        warmup.record(null, 100_000);

        assertThat(warmup.delayNanos()).isEqualTo(4 * MS);
    }

    @Test
    void should_sample_at_most_a_bounded_number_of_backends_when_there_are_many() {
        for (int i = 0; i < WarmupLatency.MAX_BACKENDS; i++) {
            warmup.record("b" + i, 10 * MS);
        }
        for (int i = 0; i < 100; i++) {
            warmup.record("late" + i, 1000 * MS);
        }

        assertThat(warmup.delayNanos()).isEqualTo(4 * 10 * MS);
    }
}

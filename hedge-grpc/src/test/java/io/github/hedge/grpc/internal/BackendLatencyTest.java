package io.github.hedge.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which backends the balancer keeps out of the primary rotation, in virtual time. */
class BackendLatencyTest {
    private static final String A = "127.0.0.1:1001";
    private static final String B = "127.0.0.1:1002";
    private static final String C = "127.0.0.1:1003";

    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final BackendLatency latency = new BackendLatency(BalancerConfig.DEFAULTS, time);

    /** One round of primaries, one per backend, each answering after its latency in ms; then 10 ms pass. */
    private void round(List<String> backends, double... millis) {
        for (int i = 0; i < backends.size(); i++) {
            latency.primaryPlaced(backends.get(i));
            record(backends.get(i), millis[i]);
        }
        time.advance(Duration.ofMillis(10));
    }

    /** A stream to {@code backend} that closes now, after {@code millis}. */
    private void record(String backend, double millis) {
        long now = time.nanoTime();
        latency.record(backend, now - (long) (millis * 1e6), now);
    }

    /** The slow set, judged afresh (the judgement is cached for 100 ms). */
    private java.util.Set<String> slowNow() {
        time.advance(Duration.ofMillis(101));
        return latency.slow();
    }

    @Test
    void should_keep_a_backend_out_when_its_median_is_ten_times_its_peers() {
        for (int i = 0; i < 40; i++) {
            round(List.of(A, B, C), 40, 4, 4);
        }
        assertThat(slowNow()).containsExactly(A);
    }

    @Test
    void should_keep_no_backend_out_when_only_the_fastest_is_three_times_faster_than_the_rest() {
        // against the fastest backend's median, both others would be slow, and every primary would go to one
        for (int i = 0; i < 40; i++) {
            round(List.of(A, B, C), 1, 3.5, 3.5);
        }
        assertThat(slowNow()).isEmpty();
    }

    @Test
    void should_not_judge_the_first_backend_by_the_calls_it_answered_before_its_peers_answered_their_first() {
        // a cold client: the first backend to connect takes the first calls alone, and they are slow
        for (int i = 0; i < 60; i++) {
            latency.primaryPlaced(A);
            record(A, 120);
            time.advance(Duration.ofMillis(5));
        }
        // then all three take turns, at the same speed
        for (int i = 0; i < 40; i++) {
            round(List.of(A, B, C), 4, 4, 4);
        }
        assertThat(slowNow()).isEmpty();
    }

    @Test
    void should_not_measure_streams_that_started_before_the_last_backend_answered_its_first() {
        // A answers first; 60 more calls go to A alone and are still waiting there when B and C answer
        record(A, 4);
        long[] starts = new long[60];
        for (int i = 0; i < starts.length; i++) {
            latency.primaryPlaced(A);
            starts[i] = time.nanoTime();
            time.advance(Duration.ofMillis(5));
        }
        record(B, 4);
        record(C, 4);
        time.advance(Duration.ofMillis(10));
        for (long start : starts) {
            latency.record(A, start, time.nanoTime());
        }
        for (int i = 0; i < 40; i++) {
            round(List.of(A, B, C), 4, 4, 4);
        }
        assertThat(slowNow()).isEmpty();
    }

    @Test
    void should_keep_no_backend_out_when_two_of_three_are_slow_alike() {
        // a majority slow is the norm its peers set, not an outlier
        for (int i = 0; i < 40; i++) {
            round(List.of(A, B, C), 40, 40, 4);
        }
        assertThat(slowNow()).isEmpty();
    }

    @Test
    void should_keep_at_most_one_backend_of_three_out_when_two_stall() {
        // every primary of A and B is overdue, none of C's: each of A and B stands out from its peers pooled
        for (int i = 0; i < 40; i++) {
            for (String b : List.of(A, B, C)) {
                latency.primaryPlaced(b);
                if (b != C) {
                    latency.primaryOverdue(b);
                }
                record(b, 4);
            }
            time.advance(Duration.ofMillis(10));
        }
        assertThat(slowNow())
                .as("the last backend cannot take every call")
                .hasSize(1)
                .isSubsetOf(A, B);
    }

    @Test
    void should_not_add_a_stalling_backend_while_another_is_out_among_three() {
        for (int i = 0; i < 40; i++) {
            round(List.of(A, B, C), 40, 4, 4);
        }
        assertThat(slowNow()).containsExactly(A);
        // B now stalls: every one of its primaries is overdue (B and C take the rotation)
        for (int i = 0; i < 60; i++) {
            latency.primaryPlaced(B);
            latency.primaryOverdue(B);
            record(B, 4);
            latency.primaryPlaced(C);
            record(C, 4);
            record(A, 40); // A still answers hedges
            time.advance(Duration.ofMillis(10));
        }
        assertThat(slowNow()).containsExactly(A);
    }

    @Test
    void should_keep_two_of_four_backends_out_when_two_are_ten_times_slower() {
        String d = "127.0.0.1:1004";
        for (int i = 0; i < 40; i++) {
            round(List.of(A, B, C, d), 40, 40, 4, 4);
        }
        assertThat(slowNow()).containsExactlyInAnyOrder(A, B);
    }
}

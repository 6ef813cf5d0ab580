package io.github.hedge.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.github.hedge.http.TestAttempt;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where a service's primaries and hedges go. Virtual time; attempts are plain test contexts. */
class PlacementTest {
    private static final List<String> TARGETS = List.of("a:1", "b:1", "c:1");

    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final Placement placement = new Placement(time);

    /** Calls whose primary on c:1 always goes overdue; a and b never do. */
    private void recogniseCStalling() {
        for (int i = 0; i < 3 * 200; i++) {
            TestAttempt primary = new TestAttempt(1, List.of());
            String target = TARGETS.get(placement.place(TARGETS, primary));
            if (target.equals("c:1")) {
                placement.place(TARGETS, new TestAttempt(2, List.of(target)));
            }
            time.advance(Duration.ofMillis(1));
        }
        time.advance(Duration.ofMillis(200)); // past the judgement's re-read interval
    }

    @Test
    void should_place_primaries_round_robin_when_no_instance_stalls() {
        List<String> placed = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            placed.add(TARGETS.get(placement.place(TARGETS, new TestAttempt(1, List.of()))));
        }

        assertThat(placed).containsExactly("a:1", "b:1", "c:1", "a:1", "b:1", "c:1");
    }

    @Test
    void should_keep_primaries_off_an_instance_when_it_is_judged_stalling() {
        recogniseCStalling();

        assertThat(placement.stallingNow()).containsExactly("c:1");
        for (int i = 0; i < 30; i++) {
            assertThat(TARGETS.get(placement.place(TARGETS, new TestAttempt(1, List.of()))))
                    .isNotEqualTo("c:1");
        }
    }

    /**
     * Places {@code calls} primaries, one per millisecond; the primary of every call whose number
     * modulo 10 is below {@code overdueInTen[i]} on target i goes overdue (its call places a hedge).
     */
    private void run(int calls, int... overdueInTen) {
        for (int i = 0; i < calls; i++) {
            String target = TARGETS.get(placement.place(TARGETS, new TestAttempt(1, List.of())));
            if (i / 3 % 10 < overdueInTen[TARGETS.indexOf(target)]) {
                placement.place(TARGETS, new TestAttempt(2, List.of(target)));
            }
            time.advance(Duration.ofMillis(1));
        }
    }

    @Test
    void should_set_only_the_worst_instance_apart_when_two_of_three_stall() {
        // c stalls every primary, b half of them: a alone cannot take every primary
        run(3 * 300, 0, 5, 10);
        time.advance(Duration.ofMillis(200));

        assertThat(placement.stallingNow()).containsExactly("c:1");
        List<String> placed = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            placed.add(TARGETS.get(placement.place(TARGETS, new TestAttempt(1, List.of()))));
        }
        assertThat(placed).contains("a:1", "b:1").doesNotContain("c:1");
    }

    @Test
    void should_keep_the_instance_apart_when_another_starts_stalling_worse() {
        run(3 * 300, 0, 0, 5); // c stalls half its primaries: set apart
        time.advance(Duration.ofMillis(200));
        assertThat(placement.stallingNow()).containsExactly("c:1");

        run(3 * 300, 0, 10, 5); // then b stalls every one it gets, c still half of its few

        assertThat(placement.stallingNow()).containsExactly("c:1");
    }

    @Test
    void should_send_a_hedge_to_an_untried_instance_that_does_not_stall_when_one_is_judged_stalling() {
        recogniseCStalling();

        for (int i = 0; i < 30; i++) {
            // b's turn in the rotation comes just before c's: a hedge that took its turn would land on c
            String tried = i % 2 == 0 ? "a:1" : "b:1";
            String hedge = TARGETS.get(placement.place(TARGETS, new TestAttempt(2, List.of(tried))));

            assertThat(hedge).isNotIn(tried, "c:1");
        }
    }

    @Test
    void should_send_a_hedge_to_the_stalling_instance_when_it_is_the_only_one_untried() {
        recogniseCStalling();

        String hedge = TARGETS.get(placement.place(TARGETS, new TestAttempt(3, List.of("a:1", "b:1"))));

        assertThat(hedge).isEqualTo("c:1");
    }

    @Test
    void should_send_a_hedge_round_robin_over_all_instances_when_the_call_tried_every_one() {
        List<String> placed = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            placed.add(TARGETS.get(placement.place(TARGETS, new TestAttempt(4, TARGETS))));
        }

        assertThat(placed).containsExactlyInAnyOrderElementsOf(TARGETS);
    }
}

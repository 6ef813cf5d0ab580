package io.github.hedge.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** At most half the targets, rounded down, are kept away from first attempts at once. */
class SetApartTest {

    @Test
    void should_leave_room_for_half_the_targets_rounded_down_when_counting() {
        assertThat(SetApart.room(0)).isZero();
        assertThat(SetApart.room(1)).isZero();
        assertThat(SetApart.room(2)).isEqualTo(1);
        assertThat(SetApart.room(3)).isEqualTo(1);
        assertThat(SetApart.room(5)).isEqualTo(2);
    }

    @Test
    void should_set_apart_only_the_worst_when_two_of_three_are_found_slow() {
        assertThat(SetApart.join(Set.of(), List.of("c", "b"), 3)).containsExactly("c");
    }

    @Test
    void should_keep_the_one_already_apart_when_a_worse_one_is_found() {
        // b is apart; c, found now and slower, waits until b's time is over
        assertThat(SetApart.join(Set.of("b"), List.of("c", "b"), 3)).isEmpty();
    }

    @Test
    void should_add_candidates_worst_first_while_there_is_room() {
        assertThat(SetApart.join(Set.of("a"), List.of("e", "a", "d", "c"), 5)).containsExactly("e");
        assertThat(SetApart.join(Set.of(), List.of("e", "a", "d", "c"), 5)).containsExactly("e", "a");
    }

    @Test
    void should_set_nothing_apart_when_there_is_a_single_target() {
        assertThat(SetApart.join(Set.of(), List.of("a"), 1)).isEmpty();
    }

    @Test
    void should_set_nothing_more_apart_when_more_are_apart_than_the_targets_leave_room_for() {
        // two apart, then the set shrank to three targets: none joins
        assertThat(SetApart.join(Set.of("a", "b"), List.of("c"), 3)).isEmpty();
    }

    @Test
    void should_count_a_candidate_named_twice_once_when_joining() {
        assertThat(SetApart.join(Set.of(), List.of("c", "c", "d"), 4)).containsExactly("c", "d");
    }

    @Test
    void should_name_the_setting_when_the_target_count_is_negative() {
        assertThatThrownBy(() -> SetApart.room(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("targets must be >= 0, was -1");
    }
}

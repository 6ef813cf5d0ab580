package io.github.hedge.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Which targets stall a share of their calls, judged against their peers. Virtual time. */
class StallingTargetsTest {
    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final StallingTargets<String> stalls = new StallingTargets<>(Duration.ofSeconds(5), 20, time);
    private final SplittableRandom rnd = new SplittableRandom(11);
    private static final String[] TARGETS = {"a", "b", "c"};

    /**
     * Places {@code calls} primaries round robin, one per millisecond; a primary on target i is
     * overdue with probability {@code overdue[i]}.
     */
    private void run(int calls, double... overdue) {
        for (int i = 0; i < calls; i++) {
            int t = i % TARGETS.length;
            stalls.primaryPlaced(TARGETS[t]);
            if (rnd.nextDouble() < overdue[t]) {
                stalls.primaryOverdue(TARGETS[t]);
            }
            time.advance(Duration.ofMillis(1));
        }
    }

    @Test
    void should_name_the_worst_target_first_when_two_stall() {
        // six targets, so that each stalling one is judged against mostly healthy peers; d stalls most
        StallingTargets<String> six = new StallingTargets<>(Duration.ofSeconds(5), 20, time);
        String[] targets = {"a", "b", "c", "d", "e", "f"};
        double[] overdue = {0.04, 0.04, 0.6, 0.95, 0.04, 0.04};
        for (int i = 0; i < 6 * 300; i++) {
            int t = i % 6;
            six.primaryPlaced(targets[t]);
            if (rnd.nextDouble() < overdue[t]) {
                six.primaryOverdue(targets[t]);
            }
            time.advance(Duration.ofMillis(1));
        }

        assertThat(six.stalling()).containsExactly("d", "c");
    }

    @Test
    void should_find_a_target_that_stalls_a_tenth_of_its_calls_when_its_peers_are_healthy() {
        // a p96 delay: 4% of healthy primaries overdue; c also stalls 10% of its calls
        run(3 * 300, 0.04, 0.04, 0.04 + 0.96 * 0.10);

        assertThat(stalls.stalling()).containsExactly("c");
    }

    @Test
    void should_find_no_target_when_every_target_stalls_alike() {
        run(3 * 300, 0.14, 0.14, 0.14);

        assertThat(stalls.stalling()).isEmpty();
    }

    @Test
    void should_rarely_find_a_healthy_target_stalling_when_every_target_is_healthy() {
        // 400 independent windows of 300 primaries per target, each target 4% overdue
        int windowsWithOne = 0;
        for (int w = 0; w < 400; w++) {
            run(3 * 300, 0.04, 0.04, 0.04);
            if (!stalls.stalling().isEmpty()) {
                windowsWithOne++;
            }
            time.advance(Duration.ofSeconds(5)); // the next window starts empty
        }

        assertThat(windowsWithOne).isLessThanOrEqualTo(1);
    }

    @Test
    void should_judge_no_target_before_it_and_its_peers_have_enough_primaries() {
        run(3 * 10, 0, 0, 1.0); // c overdue on every call, but only 10 primaries each

        assertThat(stalls.stalling()).isEmpty();
    }

    @Test
    void should_forget_reports_older_than_the_window() {
        run(3 * 300, 0.04, 0.04, 0.5);
        assertThat(stalls.stalling()).containsExactly("c");

        time.advance(Duration.ofSeconds(5));
        run(3 * 300, 0.04, 0.04, 0.04);

        assertThat(stalls.stalling()).isEmpty();
    }

    @Test
    void should_reject_invalid_settings_with_the_setting_range_and_value() {
        assertThatThrownBy(() -> new StallingTargets<String>(Duration.ofMillis(5), 20, time))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("window must be at least 10 ms, was PT0.005S");
        assertThatThrownBy(() -> new StallingTargets<String>(Duration.ofSeconds(5), 0, time))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("minPrimaries")
                .hasMessageContaining("0");
    }
}

package io.github.hedge.benchmarks.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The {@code closed-shift} command, in virtual time: a closed loop whose backend turns 5x slower. */
class ClosedShiftSimTest {
    @Test
    void should_bring_the_extra_load_back_within_budget_by_the_fifth_second_when_a_closed_loop_slows_down_5x() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HedgeSim.run(
                new String[] {"closed-shift", "--seed", "1", "--healthy", "33.5", "--slow", "15"},
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        String json = out.toString(StandardCharsets.UTF_8).trim();

        assertThat(json).startsWith("{\"scenario\":\"closed-shift\"").endsWith("}");
        // the budget's saved tokens are spent within seconds (HedgeBudget's recent rate over 1-2 s);
        // with the recent rate over 3-6 s it took until second 6 or 7
        Matcher back = Pattern.compile("\"back_within_b_plus_half_pp_5s_average_from_s\":(-?[0-9]+)")
                .matcher(json);
        assertThat(back.find()).isTrue();
        assertThat(Integer.parseInt(back.group(1))).isBetween(0, 4);
        // the rate falls (the closed loop), and the budget still caps the run's extra load
        Matcher extra = Pattern.compile("\"extra_load\":([0-9.E-]+)").matcher(json);
        assertThat(extra.find()).isTrue();
        assertThat(Double.parseDouble(extra.group(1))).isLessThanOrEqualTo(0.05 * 1.05 + 0.0005);
    }
}

package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Cassandra's speculative_retry syntax, as DelayPolicy.parse reads it. */
class DelaySpecTest {
    private static final long MS = 1_000_000L;
    private final DelayContext cold = DelayContext.of(2, List.of(), LatencyTracker.ofDefaults());

    @Test
    void should_parse_when_spec_is_none_always_or_a_duration() {
        assertThat(DelayPolicy.parse("NONE")).isSameAs(DelayPolicy.never());
        assertThat(DelayPolicy.parse("always").delayNanos(cold)).isZero();
        assertThat(DelayPolicy.parse("50ms").delayNanos(cold)).isEqualTo(50 * MS);
        assertThat(DelayPolicy.parse(" 1.5 s ").delayNanos(cold)).isEqualTo(1500 * MS);
        assertThat(DelayPolicy.parse("250us").delayNanos(cold)).isEqualTo(250_000L);
        assertThat(DelayPolicy.parse("10ns").delayNanos(cold)).isEqualTo(10L);
    }

    @Test
    void should_parse_when_spec_is_a_percentile() {
        assertThat(DelayPolicy.parse("99p"))
                .isInstanceOfSatisfying(
                        PercentileDelay.class, p -> assertThat(p.percentile()).isEqualTo(0.99));
        assertThat(DelayPolicy.parse("99.9PERCENTILE"))
                .isInstanceOfSatisfying(PercentileDelay.class, p -> assertThat(p.percentile())
                        .isCloseTo(0.999, org.assertj.core.data.Offset.offset(1e-12)));
    }

    @Test
    void should_hedge_at_the_duration_while_warming_up_when_min() {
        assertThat(DelayPolicy.parse("MIN(99p,50ms)").delayNanos(cold)).isEqualTo(50 * MS);
        assertThat(DelayPolicy.parse("max(99p, 50ms)").delayNanos(cold)).isEqualTo(DelayPolicy.NO_HEDGE);
    }

    @Test
    void should_name_accepted_forms_when_spec_is_bad() {
        assertThatThrownBy(() -> DelayPolicy.parse("fast"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("delay spec must be one of NONE, ALWAYS, <p>p (99p), <duration> (50ms, 1s, 250us), "
                        + "MIN(<p>p,<duration>) or MAX(<p>p,<duration>), was \"fast\"");
        assertThatThrownBy(() -> DelayPolicy.parse("100p"))
                .hasMessage("delay spec percentile must be in (0, 100), was 100 in \"100p\"");
        assertThatThrownBy(() -> DelayPolicy.parse("MIN(99p)")).hasMessageContaining("was \"MIN(99p)\"");
    }
}

package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad configuration fails in the builder, naming the setting, its valid range and the value. */
class ConfigValidationTest {

    @Test
    void should_fail_with_range_when_max_attempts_below_one() {
        assertThatThrownBy(() -> HedgeConfig.builder().maxAttempts(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxAttempts must be in [1, 16], was 0");
    }

    @Test
    void should_fail_with_range_when_percentile_outside_open_unit_interval() {
        assertThatThrownBy(() -> DelayPolicy.percentile(1.5)).hasMessage("percentile must be in (0, 1), was 1.5");
        assertThatThrownBy(() -> DelayPolicy.percentile(0)).hasMessage("percentile must be in (0, 1), was 0");
        assertThatThrownBy(() -> DelayPolicy.percentile(1)).hasMessage("percentile must be in (0, 1), was 1");
    }

    @Test
    void should_fail_with_range_when_budget_outside_closed_unit_interval() {
        assertThatThrownBy(() -> HedgeConfig.builder().budgetRatio(1.5))
                .hasMessage("budgetRatio must be in [0, 1], was 1.5");
        assertThatThrownBy(() -> HedgeConfig.builder().budgetRatio(-0.1))
                .hasMessage("budgetRatio must be in [0, 1], was -0.1");
        assertThatThrownBy(() -> HedgeBudget.builder().ratio(2)).hasMessage("ratio must be in [0, 1], was 2");
    }

    @Test
    void should_fail_with_range_when_max_extra_load_outside_open_unit_interval() {
        assertThatThrownBy(() -> HedgeConfig.builder().maxExtraLoad(0))
                .hasMessage("maxExtraLoad must be in (0, 1), was 0");
    }

    @Test
    void should_fail_with_range_when_min_above_max() {
        assertThatThrownBy(() -> DelayPolicy.percentile(0.99)
                        .min(Duration.ofMillis(50))
                        .max(Duration.ofMillis(10))
                        .build())
                .hasMessage("min must be <= max (PT0.01S), was PT0.05S");
        assertThatThrownBy(() ->
                        DelayPolicy.increasing(Duration.ofMillis(50), Duration.ofMillis(1), Duration.ofMillis(10)))
                .hasMessage("initial must be <= max (PT0.01S), was PT0.05S");
    }

    @Test
    void should_fail_with_range_when_duration_negative_or_zero_where_invalid() {
        assertThatThrownBy(() -> DelayPolicy.fixed(Duration.ofMillis(-1)))
                .hasMessage("delay must be >= 0, was PT-0.001S");
        assertThatThrownBy(() -> HedgeConfig.builder().deadline(Duration.ZERO))
                .hasMessage("deadline must be > 0, was PT0S");
        assertThatThrownBy(() -> DelayPolicy.percentile(0.9).max(Duration.ZERO))
                .hasMessage("max must be > 0, was PT0S");
        assertThatThrownBy(() -> DelayPolicy.exponential(Duration.ofMillis(1), 0.5, Duration.ofSeconds(1)))
                .hasMessage("multiplier must be a finite number >= 1, was 0.5");
        assertThatThrownBy(() -> DelayPolicy.percentile(0.9).minSamples(0))
                .hasMessage("minSamples must be >= 1, was 0");
    }

    @Test
    void should_state_the_valid_range_when_exponential_multiplier_is_below_one_or_not_finite() {
        for (double bad : new double[] {0, -2, 0.99, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatThrownBy(() -> DelayPolicy.exponential(Duration.ofMillis(1), bad, Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("multiplier must be a finite number >= 1, was " + bad);
        }
    }

    @Test
    void should_fail_when_executor_name_is_blank() {
        assertThatThrownBy(() -> HedgedExecutor.ofDefaults(" ")).hasMessage("name must not be blank, was \" \"");
    }

    @Test
    void should_work_when_built_from_defaults_or_zero_fixed_delay() {
        assertThat(DelayPolicy.fixed(Duration.ZERO).delayNanos(null)).isZero();
        HedgedExecutor ex = HedgedExecutor.ofDefaults("defaults");
        assertThat(ex.config().maxAttempts()).isEqualTo(2);
        assertThat(ex.config().idempotentByDefault()).isFalse();
        assertThat(ex.executeAsync(ctx -> java.util.concurrent.CompletableFuture.completedFuture(1))
                        .join())
                .isEqualTo(1);
    }

    @Test
    void should_keep_built_config_when_builder_is_reused() {
        HedgeConfig.Builder b = HedgeConfig.builder().maxAttempts(3);
        HedgeConfig first = b.build();
        HedgeConfig second = b.maxAttempts(5).build();
        assertThat(first.maxAttempts()).isEqualTo(3);
        assertThat(second.maxAttempts()).isEqualTo(5);
        assertThat(HedgeConfig.from(second).build().maxAttempts()).isEqualTo(5);
    }

    @Test
    void should_combine_like_cassandra_when_min_or_max_of_two_policies() {
        LatencyTracker empty = LatencyTracker.ofDefaults();
        DelayContext ctx = DelayContext.of(2, java.util.List.of(), empty);
        DelayPolicy p99 = DelayPolicy.percentile(0.99).build(); // warming up: NO_HEDGE
        DelayPolicy fifty = DelayPolicy.fixed(Duration.ofMillis(50));
        assertThat(DelayPolicy.min(p99, fifty).delayNanos(ctx)).isEqualTo(50_000_000L);
        assertThat(DelayPolicy.max(p99, fifty).delayNanos(ctx)).isEqualTo(DelayPolicy.NO_HEDGE);
        assertThat(DelayPolicy.min(DelayPolicy.fixed(Duration.ofMillis(10)), fifty)
                        .delayNanos(ctx))
                .isEqualTo(10_000_000L);
    }
}

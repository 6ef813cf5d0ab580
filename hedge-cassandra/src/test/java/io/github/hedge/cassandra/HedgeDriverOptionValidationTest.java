package io.github.hedge.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.session.ProgrammaticArguments;
import com.datastax.oss.driver.internal.core.context.DefaultDriverContext;
import java.time.Duration;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The policy mode's startup checks: each bad value of an option fails with the option's path, its
 * valid range and the value, as the driver builds the policies from its configuration (a real
 * driver context, no cluster needed).
 */
class HedgeDriverOptionValidationTest {
    private static final String SPECEX = "advanced.speculative-execution-policy.";
    private static final String HEDGE = SPECEX + "hedge.";
    private static final String LBP = "basic.load-balancing-policy.hedge.";

    private static DefaultDriverContext context(UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> options) {
        ProgrammaticDriverConfigLoaderBuilder b = DriverConfigLoader.programmaticBuilder()
                .withString(DefaultDriverOption.LOAD_BALANCING_LOCAL_DATACENTER, "dc1")
                .withClass(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, HedgeLoadBalancingPolicy.class)
                .withClass(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, HedgeSpeculativeExecutionPolicy.class);
        return new DefaultDriverContext(
                options.apply(b).build(), ProgrammaticArguments.builder().build());
    }

    private static void startPolicies(UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> options) {
        DefaultDriverContext context = context(options);
        new HedgeLoadBalancingPolicy(context, "default");
        new HedgeSpeculativeExecutionPolicy(context, "default");
    }

    private static Arguments bad(UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> options, String message) {
        return Arguments.of(options, message);
    }

    static Stream<Arguments> badValues() {
        return Stream.of(
                // the percentile: (0, 1), both ends excluded
                bad(
                        b -> b.withDouble(HedgeDriverOption.PERCENTILE, 1.5),
                        HEDGE + "percentile must be in (0, 1), was 1.5"),
                bad(
                        b -> b.withDouble(HedgeDriverOption.PERCENTILE, 1.0),
                        HEDGE + "percentile must be in (0, 1), was 1"),
                bad(b -> b.withDouble(HedgeDriverOption.PERCENTILE, 0), HEDGE + "percentile must be in (0, 1), was 0"),
                bad(
                        b -> b.withDouble(HedgeDriverOption.PERCENTILE, -0.1),
                        HEDGE + "percentile must be in (0, 1), was -0.1"),
                bad(
                        b -> b.withDouble(HedgeDriverOption.PERCENTILE, Double.NaN),
                        HEDGE + "percentile must be in (0, 1), was NaN"),
                bad(
                        b -> b.withString(HedgeDriverOption.PERCENTILE, "high"),
                        HEDGE + "percentile must be a number in (0, 1), was 'high'"),
                // the budget
                bad(
                        b -> b.withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, 1.5),
                        HEDGE + "max-extra-load must be in [0, 1], was 1.5"),
                bad(
                        b -> b.withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, -0.01),
                        HEDGE + "max-extra-load must be in [0, 1], was -0.01"),
                bad(
                        b -> b.withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, Double.NaN),
                        HEDGE + "max-extra-load must be in [0, 1], was NaN"),
                // durations
                bad(
                        b -> b.withDuration(HedgeDriverOption.MIN_DELAY, Duration.ofMillis(-5)),
                        HEDGE + "min-delay must be in [0, 365 days], was -5 ms"),
                bad(
                        b -> b.withDuration(HedgeDriverOption.MIN_DELAY, Duration.ofDays(400)),
                        HEDGE + "min-delay must be in [0, 365 days], was 400 days"),
                bad(
                        b -> b.withDuration(HedgeDriverOption.MAX_DELAY, Duration.ZERO),
                        HEDGE + "max-delay must be in (0, 365 days], was 0"),
                bad(
                        b -> b.withDuration(HedgeDriverOption.MIN_DELAY, Duration.ofMillis(10))
                                .withDuration(HedgeDriverOption.MAX_DELAY, Duration.ofMillis(5)),
                        HEDGE + "max-delay must be >= " + HEDGE + "min-delay (10 ms), was 5 ms"),
                bad(
                        b -> b.withString(HedgeDriverOption.MAX_DELAY, "soon"),
                        HEDGE + "max-delay must be a duration in (0, 365 days], was 'soon'"),
                bad(
                        b -> b.withDuration(HedgeDriverOption.WINDOW, Duration.ofMillis(500)),
                        HEDGE + "window must be in [1 s, 600 s], was 500 ms"),
                bad(
                        b -> b.withDuration(HedgeDriverOption.WINDOW, Duration.ofSeconds(601)),
                        HEDGE + "window must be in [1 s, 600 s], was 601 s"),
                // counts
                bad(
                        b -> b.withInt(HedgeDriverOption.MIN_SAMPLES, 0),
                        HEDGE + "min-samples must be a whole number in [1, 1000000], was 0"),
                bad(
                        b -> b.withDouble(HedgeDriverOption.MIN_SAMPLES, 1.5),
                        HEDGE + "min-samples must be a whole number in [1, 1000000], was 1.5"),
                bad(
                        b -> b.withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 0),
                        SPECEX + "max-executions must be a whole number in [1, 16], was 0"),
                bad(
                        b -> b.withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 17),
                        SPECEX + "max-executions must be a whole number in [1, 16], was 17"),
                // kinds and switches
                bad(
                        b -> b.withString(HedgeDriverOption.WARM_UP, "maybe"),
                        HEDGE + "warm-up must be true or false, was 'maybe'"),
                bad(
                        b -> b.withString(HedgeDriverOption.DELAY_KIND, "adaptive"),
                        HEDGE + "delay-kind must be one of [percentile, fixed], was 'adaptive'"),
                bad(
                        b -> b.withString(HedgeDriverOption.DELAY_KIND, "fixed"),
                        SPECEX + "delay must be set, in [0, 365 days], when " + HEDGE + "delay-kind = fixed"),
                bad(
                        b -> b.withString(HedgeDriverOption.DELAY_KIND, "fixed")
                                .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, Duration.ofMillis(-1)),
                        SPECEX + "delay must be in [0, 365 days], was -1 ms"),
                // the load-balancing policy's
                bad(
                        b -> b.withDouble(HedgeDriverOption.LBP_EXCLUSION_THRESHOLD, 1.0),
                        LBP + "exclusion-threshold must be in (1, 1000], was 1"),
                bad(
                        b -> b.withDouble(HedgeDriverOption.LBP_EXCLUSION_THRESHOLD, 1001),
                        LBP + "exclusion-threshold must be in (1, 1000], was 1001"),
                bad(
                        b -> b.withDuration(HedgeDriverOption.LBP_SCALE, Duration.ZERO),
                        LBP + "scale must be in (0, 365 days], was 0"),
                bad(
                        b -> b.withDuration(HedgeDriverOption.LBP_RETRY_PERIOD, Duration.ofSeconds(-1)),
                        LBP + "retry-period must be in (0, 365 days], was -1 s"),
                bad(
                        b -> b.withInt(HedgeDriverOption.LBP_MIN_MEASUREMENTS, 0),
                        LBP + "min-measurements must be a whole number in [1, 100000], was 0"),
                bad(
                        b -> b.withString(HedgeDriverOption.LBP_LATENCY_AWARE, "maybe"),
                        LBP + "latency-aware must be true or false, was 'maybe'"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("badValues")
    void should_fail_at_startup_naming_the_option_its_range_and_the_value_when_a_value_is_bad(
            UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> options, String message) {
        assertThatThrownBy(() -> startPolicies(options))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message + " (profile default)");
    }

    static Stream<Arguments> edgeValues() {
        return Stream.of(
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withDouble(HedgeDriverOption.PERCENTILE, 0.999)),
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, 0)),
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, 1)),
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withDuration(HedgeDriverOption.WINDOW, Duration.ofSeconds(1))),
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withDuration(HedgeDriverOption.WINDOW, Duration.ofSeconds(600))),
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withInt(HedgeDriverOption.MIN_SAMPLES, 1_000_000)),
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withDuration(HedgeDriverOption.MIN_DELAY, Duration.ofMillis(5))
                                .withDuration(HedgeDriverOption.MAX_DELAY, Duration.ofMillis(5))),
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withString(HedgeDriverOption.DELAY_KIND, "fixed")
                                .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, Duration.ZERO)),
                Arguments.of((UnaryOperator<ProgrammaticDriverConfigLoaderBuilder>)
                        b -> b.withDouble(HedgeDriverOption.LBP_EXCLUSION_THRESHOLD, 1000)));
    }

    @ParameterizedTest
    @MethodSource("edgeValues")
    void should_start_when_a_value_is_at_the_edge_of_its_range(
            UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> options) {
        assertThatCode(() -> startPolicies(options)).doesNotThrowAnyException();
    }

    @org.junit.jupiter.api.Test
    void should_start_with_every_default_when_no_hedge_option_is_set() {
        DefaultDriverContext context = context(b -> b);
        HedgeSpeculativeExecutionPolicy policy = new HedgeSpeculativeExecutionPolicy(context, "default");
        assertThat(policy.maxExecutions()).isEqualTo(2);
    }
}

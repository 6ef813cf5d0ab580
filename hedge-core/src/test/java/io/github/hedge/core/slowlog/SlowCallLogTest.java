package io.github.hedge.core.slowlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.AttemptRecord.AttemptOutcome;
import io.github.hedge.core.event.AttemptStarted;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.CallCompleted.CallOutcome;
import io.github.hedge.core.event.HedgeEvents;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.Subscription;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.slf4j.LoggerFactory;

class SlowCallLogTest {
    private static final long MS = 1_000_000L;
    private static final String EXPECTED_TRACE =
            "slow hedged call: executor=users call=1234 operation=getUser outcome=SUCCESS total=812.4ms winner=#2"
                    + " attempts=[#1 target=10.0.0.1:9042 start=+0.0ms dur=812.4ms CANCELLED;"
                    + " #2 target=10.0.0.2:9042 start=+95.0ms dur=11.2ms WON]";

    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final HedgeEvents events = new HedgeEvents();
    private final List<Logger> touched = new ArrayList<>();
    private String loggerName;
    private ListAppender<ILoggingEvent> appender;

    @BeforeEach
    void setUp(TestInfo info) {
        loggerName = "test.slowlog." + info.getTestMethod().orElseThrow().getName();
        appender = capture(loggerName);
    }

    @AfterEach
    void tearDown() {
        for (Logger l : touched) {
            l.detachAndStopAllAppenders();
            l.setLevel(null);
        }
    }

    private ListAppender<ILoggingEvent> capture(String name) {
        Logger logger = (Logger) LoggerFactory.getLogger(name);
        ListAppender<ILoggingEvent> a = new ListAppender<>();
        a.start();
        logger.addAppender(a);
        touched.add(logger);
        return a;
    }

    private SlowCallLog.Builder builder() {
        return SlowCallLog.builder().loggerName(loggerName).ticker(time);
    }

    private List<String> lines() {
        return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    // ------------------------------------------------------------------ fixtures

    /** The primary hangs on a slow replica; the hedge sent after 95 ms answers in 11.2 ms. */
    private static CallCompleted slowPrimaryCall(long callId, long totalNanos, Supplier<String> details) {
        return new CallCompleted(
                "users",
                callId,
                CallOutcome.SUCCESS,
                totalNanos,
                2,
                List.of(
                        new AttemptRecord(1, "10.0.0.1:9042", 0, totalNanos, AttemptOutcome.CANCELLED, null),
                        new AttemptRecord(2, "10.0.0.2:9042", 95 * MS, 11_200_000L, AttemptOutcome.WON, null)),
                "getUser",
                details,
                5_000 * MS);
    }

    private static CallCompleted call(long callId, long totalNanos) {
        return slowPrimaryCall(callId, totalNanos, null);
    }

    // ------------------------------------------------------------------ threshold and format

    @Test
    void should_log_the_call_with_its_attempt_trace_when_it_is_slower_than_the_threshold() {
        builder().build().attach(events);

        events.publish(slowPrimaryCall(1234, 812_400_000L, () -> "SELECT * FROM users WHERE id=?"));

        assertThat(lines()).containsExactly(EXPECTED_TRACE);
        assertThat(appender.list.get(0).getLevel()).isEqualTo(Level.WARN);
        assertThat(appender.list.get(0).getLoggerName()).isEqualTo(loggerName);
    }

    @Test
    void should_log_only_calls_at_or_above_the_threshold_when_calls_complete() {
        builder().threshold(Duration.ofMillis(200)).build().attach(events);

        events.publish(call(1, 199_999_999L));
        events.publish(call(2, 200 * MS));
        events.publish(call(3, 10 * MS));
        events.publish(call(4, 350 * MS));

        assertThat(lines()).hasSize(2);
        assertThat(lines().get(0))
                .startsWith("slow hedged call: executor=users call=2 ")
                .contains(" total=200.0ms ");
        assertThat(lines().get(1))
                .startsWith("slow hedged call: executor=users call=4 ")
                .contains(" total=350.0ms ");
    }

    @Test
    void should_use_500ms_threshold_and_warn_level_when_defaults_are_used() {
        SlowCallLog log = builder().build();
        log.attach(events);

        events.publish(call(1, 499_999_999L));
        events.publish(call(2, 500 * MS));

        assertThat(log.threshold()).isEqualTo(Duration.ofMillis(500));
        assertThat(lines()).singleElement().asString().startsWith("slow hedged call: executor=users call=2 ");
        assertThat(appender.list.get(0).getLevel()).isEqualTo(Level.WARN);
    }

    @Test
    void should_write_to_the_default_logger_when_no_logger_name_is_given() {
        ListAppender<ILoggingEvent> defaultAppender = capture(SlowCallLog.DEFAULT_LOGGER_NAME);
        SlowCallLog.builder().ticker(time).build().attach(events);

        events.publish(slowPrimaryCall(1234, 812_400_000L, null));

        assertThat(defaultAppender.list)
                .singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage()).isEqualTo(EXPECTED_TRACE))
                .satisfies(e -> assertThat(e.getLoggerName()).isEqualTo("io.github.hedge.slowlog"));
    }

    @Test
    void should_show_error_class_unknown_target_and_no_winner_when_every_attempt_failed() {
        builder().build().attach(events);

        events.publish(new CallCompleted(
                "orders",
                77,
                CallOutcome.FAILURE,
                1_203_450_000L,
                0,
                List.of(
                        new AttemptRecord(
                                1,
                                null,
                                0,
                                1_203_450_000L,
                                AttemptOutcome.FAILED,
                                "java.util.concurrent.TimeoutException"),
                        new AttemptRecord(
                                2, "b:9042", 600_040_000L, 603_360_000L, AttemptOutcome.FAILED, "java.io.IOException")),
                null,
                null,
                0));

        assertThat(lines())
                .containsExactly("slow hedged call: executor=orders call=77 operation=- outcome=FAILURE total=1203.5ms"
                        + " winner=none attempts=[#1 target=- start=+0.0ms dur=1203.5ms FAILED"
                        + " error=java.util.concurrent.TimeoutException;"
                        + " #2 target=b:9042 start=+600.0ms dur=603.4ms FAILED error=java.io.IOException]");
    }

    @Test
    void should_log_deadline_exceeded_calls_when_they_are_slow() {
        builder().build().attach(events);

        events.publish(new CallCompleted(
                "users",
                9,
                CallOutcome.DEADLINE_EXCEEDED,
                2_000 * MS,
                0,
                List.of(new AttemptRecord(1, "10.0.0.1:9042", 0, 2_000 * MS, AttemptOutcome.CANCELLED, null)),
                "getUser",
                null,
                0));

        assertThat(lines())
                .containsExactly("slow hedged call: executor=users call=9 operation=getUser outcome=DEADLINE_EXCEEDED"
                        + " total=2000.0ms winner=none attempts=[#1 target=10.0.0.1:9042 start=+0.0ms dur=2000.0ms"
                        + " CANCELLED]");
    }

    @Test
    void should_ignore_events_other_than_call_completed_when_they_are_published() {
        builder().threshold(Duration.ofNanos(1)).build().attach(events);

        events.publish(new HedgeSent("users", 1, 2, HedgeSent.Reason.DELAY_ELAPSED, 10 * MS, 10 * MS));
        events.publish(new HedgeWon("users", 1, 2, "10.0.0.2:9042", 20 * MS));

        assertThat(lines()).isEmpty();
    }

    // ------------------------------------------------------------------ details

    @Test
    void should_never_log_details_when_not_opted_in() {
        builder().build().attach(events);

        events.publish(
                slowPrimaryCall(1234, 812_400_000L, () -> "UPDATE users SET password='hunter2-secret' WHERE id=42"));

        assertThat(lines()).containsExactly(EXPECTED_TRACE);
        assertThat(appender.list)
                .noneSatisfy(e -> assertThat(e.getFormattedMessage()).contains("hunter2"));
        assertThat(appender.list)
                .allSatisfy(e -> assertThat(e.getArgumentArray()).isNullOrEmpty());
    }

    @Test
    void should_not_even_compute_details_when_not_opted_in() {
        builder().build().attach(events);

        events.publish(slowPrimaryCall(1234, 812_400_000L, () -> {
            throw new AssertionError("details must not be computed");
        }));

        assertThat(lines()).containsExactly(EXPECTED_TRACE);
    }

    @Test
    void should_append_details_when_opted_in() {
        builder().includeDetails(true).build().attach(events);

        events.publish(
                slowPrimaryCall(1234, 812_400_000L, () -> "UPDATE users SET password='hunter2-secret' WHERE id=42"));
        events.publish(call(1235, 600 * MS));

        assertThat(lines())
                .containsExactly(
                        EXPECTED_TRACE + " details=UPDATE users SET password='hunter2-secret' WHERE id=42",
                        EXPECTED_TRACE.replace("call=1234", "call=1235").replace("812.4ms", "600.0ms"));
    }

    @Test
    void should_log_the_call_without_details_when_the_details_supplier_throws() {
        builder().includeDetails(true).build().attach(events);

        events.publish(slowPrimaryCall(1234, 812_400_000L, () -> {
            throw new IllegalStateException("secret in the message");
        }));

        assertThat(lines()).containsExactly(EXPECTED_TRACE + " details=<unavailable: java.lang.IllegalStateException>");
    }

    // ------------------------------------------------------------------ level

    @Test
    void should_log_at_info_when_configured_and_the_logger_allows_it() {
        ((Logger) LoggerFactory.getLogger(loggerName)).setLevel(Level.INFO);
        builder().level(org.slf4j.event.Level.INFO).build().attach(events);

        events.publish(slowPrimaryCall(1234, 812_400_000L, null));

        assertThat(appender.list).singleElement().satisfies(e -> {
            assertThat(e.getLevel()).isEqualTo(Level.INFO);
            assertThat(e.getFormattedMessage()).isEqualTo(EXPECTED_TRACE);
        });
    }

    @Test
    void should_write_nothing_and_count_nothing_when_the_level_is_disabled() {
        // root is WARN in logback-test.xml, so INFO is disabled
        SlowCallLog log = builder()
                .level(org.slf4j.event.Level.INFO)
                .maxPerInterval(1, Duration.ofSeconds(1))
                .build();
        log.attach(events);

        events.publish(call(1, 600 * MS));
        events.publish(call(2, 600 * MS));
        ((Logger) LoggerFactory.getLogger(loggerName)).setLevel(Level.INFO);
        events.publish(call(3, 600 * MS));

        assertThat(lines()).singleElement().asString().contains(" call=3 ").doesNotContain("not logged");
    }

    // ------------------------------------------------------------------ rate limit

    @Test
    void should_suppress_and_then_report_the_count_when_more_slow_calls_than_the_limit_arrive() {
        builder().maxPerInterval(2, Duration.ofSeconds(1)).build().attach(events);

        for (int i = 1; i <= 5; i++) {
            events.publish(call(i, 600 * MS));
            time.advance(Duration.ofMillis(100));
        }
        assertThat(lines()).hasSize(2);
        assertThat(lines().get(0)).contains(" call=1 ");
        assertThat(lines().get(1)).contains(" call=2 ");

        time.advance(Duration.ofMillis(500)); // 1 s after the window opened at call 1
        events.publish(call(6, 600 * MS));

        assertThat(lines()).hasSize(3);
        assertThat(lines().get(2))
                .startsWith("slow hedged call: executor=users call=6 ")
                .endsWith(" WON] (3 slow calls not logged)");
    }

    @Test
    void should_keep_suppressing_when_the_interval_has_not_rolled_over() {
        builder().maxPerInterval(1, Duration.ofSeconds(1)).build().attach(events);

        events.publish(call(1, 600 * MS));
        time.advance(Duration.ofMillis(999));
        events.publish(call(2, 600 * MS));
        events.publish(call(3, 10 * MS)); // fast: no summary inside the window
        time.advance(Duration.ofMillis(1));
        events.publish(call(4, 600 * MS));
        events.publish(call(5, 600 * MS));

        assertThat(lines()).hasSize(2);
        assertThat(lines().get(0)).contains(" call=1 ").doesNotContain("not logged");
        assertThat(lines().get(1)).contains(" call=4 ").endsWith(" (1 slow call not logged)");
    }

    @Test
    void should_write_a_summary_line_when_the_interval_rolls_over_and_the_next_call_is_fast() {
        builder().maxPerInterval(2, Duration.ofSeconds(10)).build().attach(events);

        for (int i = 1; i <= 12; i++) {
            events.publish(call(i, 700 * MS));
        }
        time.advance(Duration.ofSeconds(10));
        events.publish(call(13, 5 * MS));
        events.publish(call(14, 5 * MS));
        events.publish(call(15, 700 * MS));

        assertThat(lines()).hasSize(4);
        assertThat(lines().get(2)).isEqualTo("slow hedged call log: 10 slow calls not logged (at most 2 per 10s)");
        assertThat(lines().get(3)).contains(" call=15 ").doesNotContain("not logged");
    }

    @Test
    void should_limit_to_ten_per_ten_seconds_when_defaults_are_used() {
        builder().build().attach(events);

        for (int i = 1; i <= 25; i++) {
            events.publish(call(i, 600 * MS));
            time.advance(Duration.ofMillis(100));
        }
        time.advance(Duration.ofMillis(7_500)); // 10 s after the first call
        events.publish(call(26, 1 * MS));

        assertThat(lines()).hasSize(11);
        assertThat(lines().get(10)).isEqualTo("slow hedged call log: 15 slow calls not logged (at most 10 per 10s)");
    }

    @Test
    void should_share_the_limit_when_attached_to_two_event_streams() {
        HedgeEvents other = new HedgeEvents();
        SlowCallLog log = builder().maxPerInterval(1, Duration.ofSeconds(1)).build();
        log.attach(events);
        log.attach(other);

        events.publish(call(1, 600 * MS));
        other.publish(call(2, 600 * MS));

        assertThat(lines()).hasSize(1);
    }

    // ------------------------------------------------------------------ subscription

    @Test
    void should_stop_logging_when_the_subscription_is_closed() {
        Subscription subscription = builder().build().attach(events);
        events.publish(call(1, 600 * MS));

        subscription.close();
        events.publish(call(2, 600 * MS));

        assertThat(lines()).hasSize(1);
        assertThat(events.listenerCount()).isZero();
    }

    @Test
    void should_log_when_subscribed_directly_as_a_listener() {
        events.subscribe(builder().build());

        events.publish(slowPrimaryCall(1234, 812_400_000L, null));

        assertThat(lines()).containsExactly(EXPECTED_TRACE);
    }

    @Test
    void should_log_the_trace_of_a_slow_executor_call_and_be_asked_only_for_call_completed_when_attached() {
        HedgedExecutor ex = HedgedExecutor.of(
                "users",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .budget(HedgeBudget.unlimited())
                        .delay(DelayPolicy.fixed(Duration.ofMillis(95)))
                        .build());
        SlowCallLog log = builder().threshold(Duration.ofMillis(200)).build();
        log.attach(ex.events());
        assertThat(ex.events().hasListeners(AttemptStarted.class)).isFalse();
        assertThat(ex.events().hasListeners(HedgeSent.class)).isFalse();
        assertThat(ex.events().wantsCallCompleted(CallOutcome.SUCCESS, 199_999_999L))
                .isFalse();

        List<CompletableFuture<String>> attempts = new ArrayList<>();
        AttemptFunction<String> fn = ctx -> {
            ctx.reportTarget("10.0.0." + ctx.attemptNumber() + ":9042");
            CompletableFuture<String> f = new CompletableFuture<>();
            attempts.add(f);
            return f;
        };
        CompletableFuture<String> fast = ex.executeAsync(fn);
        time.advance(Duration.ofMillis(150));
        attempts.get(1).complete("fast enough");
        attempts.clear();
        CompletableFuture<String> slow = ex.executeAsync(fn);
        time.advance(Duration.ofMillis(95));
        time.advance(Duration.ofNanos(211_200_000L));
        attempts.get(1).complete("late");

        assertThat(fast).isCompletedWithValue("fast enough");
        assertThat(slow).isCompletedWithValue("late");
        // the slow call is the first one an event was built for: call id 1
        assertThat(lines())
                .containsExactly("slow hedged call: executor=users call=1 operation=- outcome=SUCCESS total=306.2ms"
                        + " winner=#2 attempts=[#1 target=10.0.0.1:9042 start=+0.0ms dur=306.2ms CANCELLED;"
                        + " #2 target=10.0.0.2:9042 start=+95.0ms dur=211.2ms WON]");
    }

    // ------------------------------------------------------------------ validation

    @Test
    void should_reject_invalid_settings_with_the_setting_range_and_value_when_building() {
        SlowCallLog.Builder b = SlowCallLog.builder();

        assertThatThrownBy(() -> b.threshold(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("threshold must be > 0, was PT0S");
        assertThatThrownBy(() -> b.threshold(Duration.ofMillis(-5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("threshold must be > 0, was PT-0.005S");
        assertThatThrownBy(() -> b.threshold(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("threshold must not be null");
        assertThatThrownBy(() -> b.maxPerInterval(0, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxPerInterval must be in [1, 1000000], was 0");
        assertThatThrownBy(() -> b.maxPerInterval(5, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("interval must be > 0, was PT0S");
        assertThatThrownBy(() -> b.level(org.slf4j.event.Level.DEBUG))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("level must be one of [INFO, WARN], was DEBUG");
        assertThatThrownBy(() -> b.loggerName(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("loggerName must not be blank, was \" \"");
        assertThatThrownBy(() -> b.ticker(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("ticker must not be null");
        assertThatThrownBy(() -> SlowCallLog.ofDefaults().attach(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("events must not be null");
    }

    @Test
    void should_round_milliseconds_to_one_decimal_when_formatting() {
        StringBuilder sb = new StringBuilder();
        SlowCallLog.appendMillis(sb, 812_449_999L);
        sb.append(' ');
        SlowCallLog.appendMillis(sb, 812_450_000L);
        sb.append(' ');
        SlowCallLog.appendMillis(sb, 0);
        sb.append(' ');
        SlowCallLog.appendMillis(sb, 49_999);

        assertThat(sb).hasToString("812.4ms 812.5ms 0.0ms 0.0ms");
    }
}

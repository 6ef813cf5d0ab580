package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The one INFO line that says a call not declared idempotent is never hedged (core.md, "Idempotence"). */
class NonIdempotentNoticeTest {
    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final Logger logger = (Logger) LoggerFactory.getLogger("io.github.hedge.core.HedgedExecutor");
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    @BeforeEach
    void setUp() {
        appender.start();
        logger.addAppender(appender);
        logger.setLevel(Level.INFO); // the test configuration logs WARN and above
    }

    @AfterEach
    void tearDown() {
        logger.detachAppender(appender);
        logger.setLevel(null);
        appender.stop();
    }

    private HedgedExecutor executor(String name) {
        return HedgedExecutor.of(
                name,
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.unlimited())
                        .build());
    }

    private static CompletableFuture<String> slowAnswer(VirtualTimeScheduler time, String secret) {
        CompletableFuture<String> f = new CompletableFuture<>();
        time.schedule(() -> f.complete(secret), Duration.ofMillis(50).toNanos());
        return f;
    }

    @Test
    void should_log_one_info_line_naming_the_executor_and_the_fix_when_calls_are_not_declared_idempotent() {
        HedgedExecutor ex = executor("users");

        for (int i = 0; i < 3; i++) {
            String secret = "user-" + i + "@example.com";
            ex.executeAsync(CallOptions.nonIdempotent(), ctx -> slowAnswer(time, secret));
        }
        ex.executeAsync(ctx -> slowAnswer(time, "user-3@example.com")); // not declared: default false
        time.advance(Duration.ofMillis(100));

        assertThat(ex.stats().hedgesSent()).isZero();
        assertThat(ex.stats().notHedgedNonIdempotent()).isEqualTo(4);
        assertThat(appender.list).hasSize(1);
        ILoggingEvent line = appender.list.get(0);
        assertThat(line.getLevel()).isEqualTo(Level.INFO);
        assertThat(line.getFormattedMessage())
                .contains("'users'", "never hedged", "CallOptions.idempotent()", "idempotentByDefault(true)")
                .doesNotContain("example.com");
    }

    @Test
    void should_log_the_notice_once_per_executor_when_two_executors_run_non_idempotent_calls() {
        HedgedExecutor users = executor("users");
        HedgedExecutor orders = executor("orders");

        for (int i = 0; i < 2; i++) {
            users.executeAsync(CallOptions.nonIdempotent(), ctx -> slowAnswer(time, "x"));
            orders.executeAsync(CallOptions.nonIdempotent(), ctx -> slowAnswer(time, "x"));
        }
        time.advance(Duration.ofMillis(100));

        assertThat(appender.list)
                .extracting(ILoggingEvent::getFormattedMessage)
                .satisfiesExactlyInAnyOrder(m -> assertThat(m).contains("'users'"), m -> assertThat(m)
                        .contains("'orders'"));
    }
}

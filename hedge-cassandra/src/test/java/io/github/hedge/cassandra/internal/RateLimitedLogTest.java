package io.github.hedge.cassandra.internal;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RateLimitedLogTest {
    private final Logger logger = (Logger) LoggerFactory.getLogger("test.cassandra.RateLimitedLogTest");
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final AtomicLong now = new AtomicLong(123_456_789L);
    private final RateLimitedLog log = new RateLimitedLog(logger, TimeUnit.MINUTES.toNanos(1), now::get);

    @BeforeEach
    void capture() {
        appender.start();
        logger.addAppender(appender);
    }

    @AfterEach
    void release() {
        logger.detachAppender(appender);
    }

    private List<String> lines() {
        return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void should_log_one_info_line_a_minute_counting_the_events_in_between_when_events_keep_coming() {
        for (int i = 0; i < 5; i++) {
            log.log("not hedged ({} more since the last line)");
            now.addAndGet(TimeUnit.SECONDS.toNanos(10)); // 5 events over 50 s: one line
        }
        assertThat(lines()).containsExactly("not hedged (0 more since the last line)");
        assertThat(appender.list.get(0).getLevel()).isEqualTo(Level.INFO);

        now.addAndGet(TimeUnit.SECONDS.toNanos(10)); // a minute after the first line
        log.log("not hedged ({} more since the last line)");
        log.log("not hedged ({} more since the last line)");
        assertThat(lines())
                .containsExactly("not hedged (0 more since the last line)", "not hedged (4 more since the last line)");
    }
}

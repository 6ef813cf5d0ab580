package io.github.hedge.core.slowlog;

import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeEventListener;
import io.github.hedge.core.event.HedgeEvents;
import io.github.hedge.core.event.Subscription;
import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Logs hedged calls that took at least a threshold, with their per-attempt trace, in the spirit of
 * Scylla's slow query log: the trace of the slow call itself says which attempt was slow, on which
 * target, and when the hedge went out, which a later rerun may not reproduce.
 *
 * <pre>{@code
 * SlowCallLog slowLog = SlowCallLog.builder().threshold(Duration.ofMillis(200)).build();
 * Subscription s = slowLog.attach(executor.events());
 * }</pre>
 *
 * <p>One line per slow call, through SLF4J (logger {@value #DEFAULT_LOGGER_NAME} by default, at
 * WARN by default):
 *
 * <pre>
 * slow hedged call: executor=users call=1234 operation=getUser outcome=SUCCESS total=812.4ms winner=#2 attempts=[#1 target=10.0.0.1:9042 start=+0.0ms dur=812.4ms CANCELLED; #2 target=10.0.0.2:9042 start=+95.0ms dur=11.2ms WON]
 * </pre>
 *
 * <ul>
 *   <li>Times are in milliseconds with one decimal; {@code start} is the attempt's start after the
 *       call's start, {@code dur} how long it ran until it completed or was cancelled.
 *   <li>{@code operation}, {@code target} print {@code -} when unknown; {@code winner} prints
 *       {@code none} when no attempt won.
 *   <li>A failed attempt prints {@code FAILED error=<exception class name>}: never the message,
 *       which may carry user data.
 *   <li>{@link CallCompleted#details()} (a query text, say) may carry user data, so it is logged
 *       only with {@link Builder#includeDetails(boolean) includeDetails(true)}, as a trailing
 *       {@code details=...}.
 * </ul>
 *
 * <p><b>Rate limit.</b> At most {@code n} lines per {@code interval} ({@link
 * Builder#maxPerInterval(int, Duration)}; default {@value #DEFAULT_MAX_PER_INTERVAL} per {@link
 * #DEFAULT_INTERVAL 10 s}, so a bad minute writes at most 60 lines plus a few summaries). Slow
 * calls over the limit are counted, not logged; the next line logged ends with {@code (N slow
 * calls not logged)}. If the interval rolls over and the next call is not slow, a summary line
 * {@code slow hedged call log: N slow calls not logged (at most 10 per 10s)} is written instead. The
 * windows are measured on the injected {@link Ticker}, so tests run in virtual time; no thread or
 * timer is used, so a count is reported only when a further call completes.
 *
 * <p><b>Cost.</b> The log takes only {@link CallCompleted} events ({@link #eventTypes()}), and
 * {@link #wantsCallCompleted} accepts a call only when it is slow (or while a count of suppressed
 * calls awaits its report), so for a call under the threshold the executor builds no event and no
 * trace at all: the call costs a comparison and a volatile read.
 *
 * <p>Thread-safe: one instance may listen to any number of event streams (the rate limit is
 * shared). Deciding whether to log takes a short lock only for slow calls (or while a count of
 * suppressed calls awaits its report).
 */
public final class SlowCallLog implements HedgeEventListener {
    /** The default logger name. */
    public static final String DEFAULT_LOGGER_NAME = "io.github.hedge.slowlog";

    /** The default threshold: 500 ms. */
    public static final Duration DEFAULT_THRESHOLD = Duration.ofMillis(500);

    /** The default number of lines per {@link #DEFAULT_INTERVAL}. */
    public static final int DEFAULT_MAX_PER_INTERVAL = 10;

    /** The default rate-limit interval: 10 s. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

    private static final Set<Class<? extends HedgeEvent>> EVENT_TYPES = Set.of(CallCompleted.class);

    private final Logger logger;
    private final Level level;
    private final long thresholdNanos;
    private final int maxPerInterval;
    private final long intervalNanos;
    private final String intervalText;
    private final boolean includeDetails;
    private final Ticker ticker;

    // rate limit state, guarded by this
    private boolean windowStarted;
    private long windowStartNanos;
    private int loggedInWindow;
    /** slow calls not logged and not yet reported; written under the lock, read without it. */
    private volatile long suppressed;

    private SlowCallLog(Builder b) {
        this.logger = LoggerFactory.getLogger(b.loggerName);
        this.level = b.level;
        this.thresholdNanos = b.threshold.toNanos();
        this.maxPerInterval = b.maxPerInterval;
        this.intervalNanos = b.interval.toNanos();
        this.intervalText = formatDuration(b.interval);
        this.includeDetails = b.includeDetails;
        this.ticker = b.ticker;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a slow-call log with every default */
    public static SlowCallLog ofDefaults() {
        return builder().build();
    }

    /**
     * Subscribes this log to an event stream.
     *
     * @param events an executor's (or adapter's) events
     * @return the handle whose {@code close()} detaches it
     */
    public Subscription attach(HedgeEvents events) {
        return Checks.notNull("events", events).subscribe(this);
    }

    /** @return the threshold: calls at least this long are logged */
    public Duration threshold() {
        return Duration.ofNanos(thresholdNanos);
    }

    /** @return {@code CallCompleted} only: no other event is built for this log */
    @Override
    public Set<Class<? extends HedgeEvent>> eventTypes() {
        return EVENT_TYPES;
    }

    /**
     * @param outcome how the call ended (every outcome is logged when slow)
     * @param totalNanos the call's duration, in nanoseconds
     * @return whether the call is slow, or a count of suppressed calls awaits its report: otherwise
     *     the producer builds no event (nor per-attempt trace) for this log
     */
    @Override
    public boolean wantsCallCompleted(CallCompleted.CallOutcome outcome, long totalNanos) {
        return totalNanos >= thresholdNanos || suppressed != 0;
    }

    @Override
    public void onEvent(HedgeEvent event) {
        if (!(event instanceof CallCompleted call)) {
            return;
        }
        boolean slow = call.totalNanos() >= thresholdNanos;
        if (!slow && suppressed == 0) {
            return;
        }
        if (!isEnabled()) {
            return;
        }
        long notLogged;
        boolean logCall;
        synchronized (this) {
            long now = ticker.nanoTime();
            if (!windowStarted || now - windowStartNanos >= intervalNanos) {
                if (!slow && !windowStarted) {
                    return;
                }
                windowStarted = true;
                windowStartNanos = now;
                loggedInWindow = 0;
                if (!slow && suppressed == 0) {
                    return; // another thread reported the count already
                }
            } else if (!slow) {
                return; // a count awaits the end of the window
            }
            if (slow && loggedInWindow >= maxPerInterval) {
                suppressed++;
                return;
            }
            loggedInWindow++;
            notLogged = suppressed;
            suppressed = 0;
            logCall = slow;
        }
        if (logCall) {
            log(format(call, notLogged));
        } else {
            log("slow hedged call log: " + notLoggedText(notLogged) + " (at most " + maxPerInterval + " per "
                    + intervalText + ")");
        }
    }

    private boolean isEnabled() {
        return level == Level.WARN ? logger.isWarnEnabled() : logger.isInfoEnabled();
    }

    private void log(String line) {
        if (level == Level.WARN) {
            logger.warn(line);
        } else {
            logger.info(line);
        }
    }

    private String format(CallCompleted call, long notLogged) {
        StringBuilder sb = new StringBuilder(160 + 96 * call.attempts().size());
        sb.append("slow hedged call: executor=")
                .append(call.executorName())
                .append(" call=")
                .append(call.callId())
                .append(" operation=")
                .append(call.operation() == null ? "-" : call.operation())
                .append(" outcome=")
                .append(call.outcome())
                .append(" total=");
        appendMillis(sb, call.totalNanos());
        sb.append(" winner=");
        if (call.winningAttempt() > 0) {
            sb.append('#').append(call.winningAttempt());
        } else {
            sb.append("none");
        }
        sb.append(" attempts=[");
        boolean first = true;
        for (AttemptRecord a : call.attempts()) {
            if (!first) {
                sb.append("; ");
            }
            first = false;
            sb.append('#')
                    .append(a.attemptNumber())
                    .append(" target=")
                    .append(a.target() == null ? "-" : a.target())
                    .append(" start=+");
            appendMillis(sb, a.startOffsetNanos());
            sb.append(" dur=");
            appendMillis(sb, a.durationNanos());
            sb.append(' ').append(a.outcome());
            if (a.errorType() != null) {
                sb.append(" error=").append(a.errorType());
            }
        }
        sb.append(']');
        if (includeDetails && call.details() != null) {
            sb.append(" details=").append(details(call.details()));
        }
        if (notLogged > 0) {
            sb.append(" (").append(notLoggedText(notLogged)).append(')');
        }
        return sb.toString();
    }

    private static String notLoggedText(long n) {
        return n == 1 ? "1 slow call not logged" : n + " slow calls not logged";
    }

    private static String details(Supplier<String> details) {
        try {
            return String.valueOf(details.get());
        } catch (RuntimeException e) {
            return "<unavailable: " + e.getClass().getName() + ">";
        }
    }

    /** Milliseconds with one decimal, rounded half up: 812_449_999 ns is "812.4ms". */
    static void appendMillis(StringBuilder sb, long nanos) {
        if (nanos < 0) {
            sb.append('-');
            nanos = nanos == Long.MIN_VALUE ? Long.MAX_VALUE : -nanos;
        }
        long tenths = (nanos + 50_000) / 100_000;
        sb.append(tenths / 10).append('.').append(tenths % 10).append("ms");
    }

    private static String formatDuration(Duration d) {
        long ms = d.toMillis();
        if (d.toNanos() % 1_000_000 != 0) {
            return d.toString();
        }
        return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
    }

    /**
     * Settings of a {@link SlowCallLog}. Not thread-safe; build once.
     *
     * <p>Defaults: threshold 500 ms, at most 10 lines per 10 s, logger {@value
     * SlowCallLog#DEFAULT_LOGGER_NAME}, level WARN, details not logged, system ticker.
     */
    public static final class Builder {
        private Duration threshold = DEFAULT_THRESHOLD;
        private int maxPerInterval = DEFAULT_MAX_PER_INTERVAL;
        private Duration interval = DEFAULT_INTERVAL;
        private String loggerName = DEFAULT_LOGGER_NAME;
        private Level level = Level.WARN;
        private boolean includeDetails;
        private Ticker ticker = Ticker.system();

        private Builder() {}

        /**
         * @param threshold calls whose total time is at least this are logged; must be &gt; 0
         * @return this builder
         */
        public Builder threshold(Duration threshold) {
            this.threshold = Checks.positive("threshold", threshold);
            return this;
        }

        /**
         * @param n at most this many lines per interval, in [1, 1000000]
         * @param interval the rate-limit window; must be &gt; 0
         * @return this builder
         */
        public Builder maxPerInterval(int n, Duration interval) {
            Checks.closedRange("maxPerInterval", n, 1, 1_000_000);
            this.interval = Checks.positive("interval", interval);
            this.maxPerInterval = n;
            return this;
        }

        /**
         * @param loggerName the SLF4J logger to write to
         * @return this builder
         */
        public Builder loggerName(String loggerName) {
            this.loggerName = Checks.name("loggerName", loggerName);
            return this;
        }

        /**
         * @param level {@link Level#WARN} (default) or {@link Level#INFO}
         * @return this builder
         */
        public Builder level(Level level) {
            Checks.notNull("level", level);
            if (level != Level.WARN && level != Level.INFO) {
                throw new IllegalArgumentException("level must be one of [INFO, WARN], was " + level);
            }
            this.level = level;
            return this;
        }

        /**
         * @param include whether to log {@link CallCompleted#details()}, which may carry user data
         *     (a query text with its values, say); off by default
         * @return this builder
         */
        public Builder includeDetails(boolean include) {
            this.includeDetails = include;
            return this;
        }

        /**
         * @param ticker the time source of the rate limit; the system ticker by default
         * @return this builder
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Checks.notNull("ticker", ticker);
            return this;
        }

        /** @return the slow-call log; attach it to events with {@link SlowCallLog#attach} */
        public SlowCallLog build() {
            return new SlowCallLog(this);
        }
    }
}

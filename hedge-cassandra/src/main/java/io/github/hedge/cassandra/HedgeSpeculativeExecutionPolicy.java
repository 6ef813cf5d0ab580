package io.github.hedge.cassandra;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import com.datastax.oss.driver.api.core.context.DriverContext;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.session.Request;
import com.datastax.oss.driver.api.core.specex.SpeculativeExecutionPolicy;
import io.github.hedge.cassandra.internal.Options;
import io.github.hedge.cassandra.internal.Statements;
import io.github.hedge.core.DelayContext;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.HedgeEvents;
import io.github.hedge.core.event.HedgeSent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A drop-in {@link SpeculativeExecutionPolicy}: the driver still runs speculative executions, but
 * hedge decides the delay (by default the p96 of recent per-node latency, {@code 1 - 0.8 *
 * max-extra-load} clamped to {@code [0.5, 0.999]}; the delay clamped to {@code [min-delay,
 * max-delay]}; so that expected demand leaves a fifth
 * of the budget for bursts) and caps extra executions with a budget (by default 5% of idempotent
 * requests over 30 s). The delay sees that budget as the executor's delay sees its own ({@link
 * DelayContext#of(int, List, io.github.hedge.core.LatencyTracker, HedgeBudget)}): while it runs
 * low, the delay rises so that demand for speculative executions meets what it supplies.
 *
 * <pre>
 * datastax-java-driver {
 *   basic.load-balancing-policy.class = io.github.hedge.cassandra.HedgeLoadBalancingPolicy
 *   advanced.speculative-execution-policy {
 *     class = io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy
 *     max-executions = 2
 *     hedge.max-extra-load = 0.05
 *   }
 *   advanced.netty.timer.tick-duration = 1 ms
 * }
 * </pre>
 *
 * <p><b>Why the load-balancing policy too.</b> The driver asks {@link #nextExecution} only to
 * <em>schedule</em> the next execution; most scheduled executions never fire because the request
 * completes first. The moment an execution really goes out is when it takes a node from the query
 * plan, on the driver's timer thread: {@link HedgeLoadBalancingPolicy} returns a query plan that
 * charges this policy's budget there and ends the plan for that execution when the budget is
 * spent (the running executions go on). It also feeds the latency of every answered execution to
 * this policy's tracker through its request tracker. Without it this policy refuses to start.
 *
 * <p><b>Warm-up.</b> Until the percentile has its first estimate ({@code min-samples}, 100, and at
 * least {@code 5 / (1 - p)}: 125 for the default p96; a warming tracker shows new samples every
 * 62.5 ms), a new session hedges at the core's warm-up bound ({@link
 * io.github.hedge.core.PercentileDelay#fallback()}: from the first answer on, 4 times the median
 * node's median latency, or more where the samples already support more; within {@code min-delay}
 * and {@code max-delay}), and the budget starts with {@link HedgeBudget#coldStartTokens(double)}
 * tokens (20 at 5%, none at 0), an advance that the first primaries' deposits repay, so the first
 * requests do not wait on a slow replica. {@code hedge.warm-up = false} turns both off (no
 * speculation before the first estimate).
 *
 * <p><b>Censoring.</b> Through the driver, a losing execution reports nothing (its callback is
 * cancelled): the tracker sees winners and timeouts, so its percentile is biased low, hedges are
 * asked for more often, and the budget caps them. {@link HedgedCqlSession} measures losers too.
 *
 * <p><b>Timer tick.</b> Executions fire on the driver's timer, whose tick ({@code
 * advanced.netty.timer.tick-duration}, session-wide, default 100 ms) rounds every delay up: the
 * first time a delay shorter than the tick is asked for, this policy logs a warning once. Set the
 * tick to 1 ms; delays are whole milliseconds, rounded up.
 *
 * <p>Options: {@link HedgeDriverOption} ({@code advanced.speculative-execution-policy.hedge.*}),
 * per profile. The driver builds one instance per distinct content of the section. Thread-safe.
 */
public class HedgeSpeculativeExecutionPolicy implements SpeculativeExecutionPolicy {
    private static final Logger LOG = LoggerFactory.getLogger(HedgeSpeculativeExecutionPolicy.class);
    /** The shortest {@code window}: the latency tracker refreshes once a second. */
    private static final Duration MIN_WINDOW = Duration.ofSeconds(1);
    /** The longest {@code window}: the latency tracker holds at most 600 one-second slices. */
    private static final Duration MAX_WINDOW = Duration.ofMinutes(10);

    private final String name;
    private final String profileName;
    private final int maxExecutions;
    private final DelayPolicy delay;
    private final HedgeBudget budget;
    private final LatencyTracker tracker;
    private final long tickMillis;
    private final AtomicBoolean warnedTick = new AtomicBoolean();
    private final HedgeEvents events = new HedgeEvents();
    private final LongAdder primaries = new LongAdder();
    private final LongAdder scheduled = new LongAdder();
    private final LongAdder sent = new LongAdder();
    private final LongAdder denied = new LongAdder();
    private final LongAdder warmingUp = new LongAdder();

    /**
     * The constructor the driver calls.
     *
     * @param context the session's context
     * @param profileName the profile this instance is built for (it may serve others with the same section)
     * @throws IllegalArgumentException naming the setting, its valid range and the value, when an
     *     option is invalid or the load-balancing policy is not {@link HedgeLoadBalancingPolicy}
     */
    public HedgeSpeculativeExecutionPolicy(DriverContext context, String profileName) {
        DriverExecutionProfile p = context.getConfig().getProfile(profileName);
        String lbp = p.getString(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, "");
        if (!lbp.equals(HedgeLoadBalancingPolicy.class.getName())) {
            throw new IllegalArgumentException(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS.getPath() + " must be "
                    + HedgeLoadBalancingPolicy.class.getName() + " when "
                    + HedgeSpeculativeExecutionPolicy.class.getName()
                    + " is the speculative execution policy (it charges the budget when an execution goes out), was "
                    + lbp + " (profile " + profileName + ")");
        }
        this.name = context.getSessionName();
        this.profileName = profileName;
        this.maxExecutions = Options.getInt(p, DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 2, 1, 16);
        double extraLoad = Options.getDouble(p, HedgeDriverOption.MAX_EXTRA_LOAD, 0.05, 0.0, false, 1.0, false);
        // the latency tracker's window refreshes every second and holds at most 600 slices of it
        Duration window =
                Options.getDuration(p, HedgeDriverOption.WINDOW, Duration.ofSeconds(30), MIN_WINDOW, false, MAX_WINDOW);
        String kind = Options.getString(p, HedgeDriverOption.DELAY_KIND, "percentile");
        boolean warmUp = false;
        if (kind.equalsIgnoreCase("fixed")) {
            if (!p.isDefined(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY)) {
                // no silent default: a delay of 0 would speculate on every request the budget allows
                throw new IllegalArgumentException(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY.getPath()
                        + " must be set, in [0, 365 days], when " + HedgeDriverOption.DELAY_KIND.getPath()
                        + " = fixed (profile " + profileName + ")");
            }
            this.delay = DelayPolicy.fixed(
                    Options.getDuration(p, DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, Duration.ZERO, true));
        } else if (kind.equalsIgnoreCase("percentile")) {
            double percentile = Options.getDouble(
                    p,
                    HedgeDriverOption.PERCENTILE,
                    Math.min(0.999, Math.max(0.5, 1 - 0.8 * extraLoad)),
                    0.0,
                    true,
                    1.0,
                    true);
            Duration min = Options.getDuration(p, HedgeDriverOption.MIN_DELAY, Duration.ofMillis(1), true);
            Duration max = Options.getDuration(p, HedgeDriverOption.MAX_DELAY, Duration.ofSeconds(1), false);
            if (max.compareTo(min) < 0) {
                throw Options.invalid(
                        p,
                        HedgeDriverOption.MAX_DELAY,
                        ">= " + HedgeDriverOption.MIN_DELAY.getPath() + " (" + Options.fmt(min) + ")",
                        Options.fmt(max));
            }
            int minSamples = Options.getInt(p, HedgeDriverOption.MIN_SAMPLES, 100, 1, 1_000_000);
            warmUp = Options.getBoolean(p, HedgeDriverOption.WARM_UP, true);
            // budget feedback, as the executor's default delay: it sees this policy's budget through
            // the context nextExecution builds
            PercentileDelay.Builder percentileDelay = DelayPolicy.percentile(percentile)
                    .min(min)
                    .max(max)
                    .minSamples(minSamples)
                    .budgetFeedback(true);
            if (!warmUp) {
                percentileDelay.fallback(DelayPolicy.never());
            }
            this.delay = percentileDelay.build();
        } else {
            throw Options.invalid(p, HedgeDriverOption.DELAY_KIND, "one of [percentile, fixed]", "'" + kind + "'");
        }
        HedgeBudget.Builder budgetBuilder =
                HedgeBudget.builder().ratio(extraLoad).window(window);
        if (warmUp) {
            budgetBuilder.initialTokens(HedgeBudget.coldStartTokens(extraLoad)); // the warm-up's hedges
        }
        this.budget = budgetBuilder.build();
        // as the core executor's own tracker: 300 samples beyond the percentile (7,500 for the
        // default p96), kept up to an hour at low rates
        this.tracker = LatencyTracker.builder().window(window).sizedFor(delay).build();
        this.tickMillis = context.getConfig()
                .getDefaultProfile()
                .getDuration(DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(100))
                .toMillis();
    }

    @Override
    public long nextExecution(Node node, CqlIdentifier keyspace, Request request, int runningExecutions) {
        if (runningExecutions >= maxExecutions) {
            return -1;
        }
        long nanos = delay.delayNanos(
                DelayContext.of(runningExecutions + 1, List.of(Statements.target(node)), tracker, budget));
        if (nanos < 0) {
            warmingUp.increment();
            return -1;
        }
        long millis = (nanos + 999_999) / 1_000_000; // the driver's timer takes whole milliseconds
        if (millis < tickMillis && warnedTick.compareAndSet(false, true)) {
            LOG.warn(
                    "speculative executions of profile {} are due after {} ms, but the driver's timer ticks every"
                            + " {} ms (advanced.netty.timer.tick-duration), so they fire up to a tick late; set"
                            + " advanced.netty.timer.tick-duration = 1 ms",
                    profileName,
                    millis,
                    tickMillis);
        }
        scheduled.increment();
        return millis;
    }

    /** Counts an idempotent request whose first execution went out: it pays for the budget. */
    void onPrimary() {
        primaries.increment();
        budget.recordPrimary();
    }

    /**
     * Asks the budget for one speculative execution that is about to go out.
     *
     * @param attemptNumber 2 for the first speculative execution
     * @return whether it may go out
     */
    boolean onSpeculativeExecution(int attemptNumber) {
        if (budget.tryAcquire()) {
            sent.increment();
            if (events.hasListeners(HedgeSent.class)) {
                events.publish(
                        new HedgeSent(name, 0, attemptNumber, HedgeSent.Reason.DELAY_ELAPSED, 0, System.nanoTime()));
            }
            return true;
        }
        denied.increment();
        if (events.hasListeners(BudgetExhausted.class)) {
            events.publish(new BudgetExhausted(name, 0, attemptNumber, System.nanoTime()));
        }
        return false;
    }

    /** @return the recent per-node latency this policy's delay is computed from (fed by the request tracker) */
    public LatencyTracker latencyTracker() {
        return tracker;
    }

    /** @return the budget of speculative executions */
    public HedgeBudget budget() {
        return budget;
    }

    /** @return the delay policy */
    public DelayPolicy delayPolicy() {
        return delay;
    }

    /**
     * @return events ({@code HedgeSent} when an execution goes out, {@code BudgetExhausted} when
     *     one is denied), for {@code HedgeMetrics.builder(policy.name(), policy.events())}; their
     *     call id is 0 (the driver does not tell which request)
     */
    public HedgeEvents events() {
        return events;
    }

    /** @return the session's name, used as the executor name in events */
    public String name() {
        return name;
    }

    /** @return the profile this instance was built for */
    public String profileName() {
        return profileName;
    }

    /** @return the most executions per request, primary included */
    public int maxExecutions() {
        return maxExecutions;
    }

    /** @return counters since creation */
    public SpeculativeExecutionStats stats() {
        return new SpeculativeExecutionStats(
                primaries.sum(), scheduled.sum(), sent.sum(), denied.sum(), warmingUp.sum());
    }

    @Override
    public void close() {
        // nothing to release: no thread, no timer
    }

    @Override
    public String toString() {
        return "HedgeSpeculativeExecutionPolicy{profile=" + profileName + ", maxExecutions=" + maxExecutions
                + ", delay=" + delay + ", budget=" + budget + '}';
    }
}

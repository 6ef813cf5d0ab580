package io.github.hedge.core;

import io.github.hedge.core.internal.BudgetAccount;
import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * Caps extra attempts (hedges) at a ratio of primary calls, with a bounded burst, so that hedging
 * can never add more than a stated fraction of load to a struggling backend.
 *
 * <h2>Rule: a token bucket with a burst cap</h2>
 *
 * Every primary call ({@link #recordPrimary()}) deposits {@code ratio} tokens; {@link #tryAcquire()}
 * grants an extra attempt iff a whole token is left, and takes it. The bucket holds at most
 *
 * <pre>{@code cap = max(minBurst, burst * ratio * primariesInWindow) + minPerSecond * windowSeconds}</pre>
 *
 * tokens, where {@code primariesInWindow} are the primaries of the last {@link #window()}, or as many
 * as the recent rate would put in a window if that is fewer (the rate over the current and the
 * previous thirtieth of the window: 1 to 2 s of the default 30 s); deposits beyond the cap are lost.
 * The second term matters after the rate drops: a closed-loop client whose backend turned 5x slower
 * calls 3-5x less often, and tokens saved at the old rate would otherwise keep hedges above the ratio
 * for many seconds at the new one. Tokens are kept in fixed point (ratio and floor rounded to 10<sup>-9</sup>
 * of a token when built), so {@code 0.29 * 100} is exactly 29 tokens, not 28.999999999999996.
 *
 * <p><b>What holds.</b> Over <em>any</em> interval {@code I} of time:
 *
 * <pre>{@code hedges(I) <= ratio * primaries(I) + cap(start of I) + minPerSecond * seconds(I)}</pre>
 *
 * and the bound is tight (a caller that wants a hedge on every call reaches it). With the default
 * {@code burst} of 0.25 and a steady rate, an interval of one window's length therefore holds at
 * most 1.25 times the ratio, however the calls that want a hedge bunch up, as long as {@code 0.25 *
 * ratio * primariesInWindow} is at least {@code minBurst} (default 75 tokens: at 5% and 1,000
 * calls/s the burst is 375 tokens); below that, at most {@code ratio + minBurst / primaries(I)}.
 * The worst case of a sliding window is 2 times, one window's worth spent at each of its ends. In the
 * long run, hedges never exceed {@code ratio * primaries + cap}, at any rate: 5% holds at 1 call
 * per minute too (one hedge per 20 primaries, whenever a call wants one), and there is no hidden
 * floor (the default {@code minPerSecond} is 0, and then no token exists that a primary did not
 * deposit). {@link Builder#initialTokens(double) Initial tokens} do not change that: they are an
 * advance on the deposits of the first primaries, a quarter of each deposit repaying it until it
 * is repaid, so after {@code P} primaries hedges never exceed {@code max(initialTokens + 3 * ratio *
 * P / 4, ratio * P)}, which is {@code ratio * P} from {@code P = 4 * initialTokens / ratio} on. A ratio of 1
 * allows one hedge per primary call (still a cap; {@link #unlimited()} is the budget that never
 * denies).
 *
 * <p><b>Why a burst.</b> On a stationary load with the delay at the {@code (1 - ratio)}
 * percentile, demand equals supply on average; the burst absorbs the random fluctuations of demand,
 * so such a budget almost never denies (a denied hedge is, by construction, a slow call), while a
 * latency shift or an overload that makes every call want a hedge still meets the cap within the
 * burst.
 *
 * <p>The window of {@code primariesInWindow} is made of 30 buckets of {@code window / 30} and
 * slides one bucket at a time. Time comes from the injected {@link Ticker} (nanoseconds); buckets
 * rotate lazily when a call sees the ticker pass a bucket boundary, and there is no background
 * thread.
 *
 * <h2>Sharing and thread-safety</h2>
 *
 * One instance may be passed to several executors: they then share one budget (the primaries of
 * any of them pay for the hedges of any of them). Thread-safe. {@link #recordPrimary()} is
 * lock-free and O(1) (two {@link LongAdder} increments on the common path) since it runs on every
 * call; a {@link #tryAcquire()} that denies on a lock-free pre-check takes no lock, one that may
 * grant takes a short lock so concurrent grants can never spend more than the rule allows. {@link
 * #snapshot()} is a lock-free, weakly consistent read.
 */
public final class HedgeBudget {
    /** The most initial tokens {@link #coldStartTokens} gives. */
    private static final double COLD_START_TOKENS = 20;
    /** The calls whose deposits {@link #coldStartTokens} advances. */
    private static final double COLD_START_CALLS = 400;

    private final boolean unlimited;
    private final double ratio;
    private final Duration window;
    private final double minPerSecond;
    private final double burst;
    private final double minBurst;
    private final double initialTokens;
    private final Ticker ticker;
    /** The tokens, the window's counts and the totals: what this policy is applied to. */
    private final BudgetAccount account;

    private HedgeBudget(Builder b, boolean unlimited) {
        this.unlimited = unlimited;
        this.ratio = unlimited ? Double.POSITIVE_INFINITY : b.ratio;
        this.window = b.window;
        this.minPerSecond = b.minPerSecond;
        this.burst = b.burst;
        this.minBurst = b.minBurst;
        this.initialTokens = b.initialTokens;
        this.ticker = b.ticker;
        this.account = new BudgetAccount(
                unlimited,
                b.ratio,
                Checks.positiveNanos("window", b.window),
                b.minPerSecond,
                b.burst,
                b.minBurst,
                b.initialTokens,
                b.ticker);
    }

    /**
     * @return a builder with the defaults: ratio 0.05, window 30 s, burst 0.25, minPerSecond 0,
     *     the system ticker
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A budget of {@code ratio} extra attempts per primary call (0.05 = 5%) over the default 30 s
     * window, without floor.
     *
     * @param ratio in [0, 1]
     * @return the budget
     */
    public static HedgeBudget ofRatio(double ratio) {
        return builder().ratio(ratio).build();
    }

    /**
     * A budget that never denies but still counts primaries and grants, so its {@link #snapshot()}
     * shows how much hedging happens. Its {@link #ratio()} is {@link Double#POSITIVE_INFINITY}.
     *
     * @return a new unlimited budget on the system ticker
     */
    public static HedgeBudget unlimited() {
        return new HedgeBudget(new Builder().ratio(1.0), true);
    }

    /**
     * Counts one primary call (it deposits {@code ratio} tokens for the length of the window).
     * Lock-free; call it once per logical call.
     */
    public void recordPrimary() {
        recordPrimary(ticker.nanoTime());
    }

    /**
     * Counts one primary call at a time the caller already read from this budget's {@link #ticker()},
     * saving a clock read on the hot path. Lock-free.
     *
     * @param nowNanos the current reading of this budget's ticker, in nanoseconds
     */
    public void recordPrimary(long nowNanos) {
        account.recordPrimary(nowNanos);
    }

    /**
     * Takes one token for an extra attempt.
     *
     * @return {@code true} if granted (counted as a hedge in the window); {@code false} if there is
     *     no whole token left (and one denial is counted)
     */
    public boolean tryAcquire() {
        return account.tryAcquire();
    }

    /**
     * A lock-free estimate of the whole and fractional tokens a {@link #tryAcquire()} could take
     * now: the balance plus deposits not yet accounted, within the latest cap; it ignores the
     * floor's accrual since the last grant. Cheap enough for the call path (a {@link LongAdder}
     * sum and volatile reads).
     *
     * @return tokens available; {@link Double#POSITIVE_INFINITY} for {@link #unlimited()}
     */
    public double availableTokens() {
        return account.availableTokens();
    }

    /**
     * A lock-free estimate of how full the bucket is: {@link #availableTokens()} over the latest cap.
     * Tokens of the initial advance count: they are the bucket's to spend, and a quarter of each
     * deposit repays them meanwhile, so a new budget reads as full as the tokens it holds (with the
     * advance read as owed, a delay policy with budget feedback aimed at fewer hedges from the first
     * call and left slow calls unhedged while the advance was repaid).
     *
     * @return in [0, 1]; 1 for {@link #unlimited()}
     */
    public double fill() {
        return account.fill();
    }

    /**
     * A lock-free estimate of the share of the next primaries this budget can pay a hedge for:
     * {@link #availableTokens()} plus what those primaries deposit for its own use (the {@link
     * #ratio()}, three quarters of it while the cold-start tokens are repaid), divided by their number. The
     * horizon is {@code calls}, or the primaries that repay what is left of the cold-start tokens if
     * more, so the advance is spread over its repayment. The floor's per-second tokens and the cap
     * are ignored. A delay policy keeps demand for hedges
     * within it ({@link PercentileDelay.Builder#budgetFeedback(boolean)}).
     *
     * @param calls the horizon, in primaries; values below 1 count as 1
     * @return a share, at least 0; {@link Double#POSITIVE_INFINITY} for {@link #unlimited()}
     */
    public double supply(long calls) {
        return account.supply(calls);
    }

    /**
     * How many hedges this budget pays for over its first {@code primaries} primary calls, by its
     * settings alone: {@code max(initialTokens + 3 * ratio * P / 4, ratio * P)}, the bound in the
     * class comment. A budget too small to pay for a few hedges over a new executor's first calls
     * sends no warm-up hedges ({@link PercentileDelay.Builder#budgetFeedback(boolean)}). Pure:
     * what was spent so far does not count.
     *
     * @param primaries the primary calls, at least 0
     * @return hedges, at least 0; {@link Double#POSITIVE_INFINITY} for {@link #unlimited()} and for
     *     a budget with a per-second floor ({@link Builder#minPerSecond(double)}), which adds
     *     tokens whatever the calls
     */
    public double hedgesOver(long primaries) {
        if (unlimited || minPerSecond > 0) {
            return Double.POSITIVE_INFINITY;
        }
        long p = Math.max(0, primaries);
        return Math.max(initialTokens + 0.75 * ratio * p, ratio * p);
    }

    /** @return the time source of the window */
    public Ticker ticker() {
        return ticker;
    }

    /** @return the configured ratio of extra attempts to primary calls; infinite for {@link #unlimited()} */
    public double ratio() {
        return ratio;
    }

    /** @return {@code true} for the budget of {@link #unlimited()}, which never denies */
    public boolean isUnlimited() {
        return unlimited;
    }

    /** @return the length of the sliding window */
    public Duration window() {
        return window;
    }

    /**
     * @return the burst: the bucket holds at most {@code burst * ratio} tokens per primary of the
     *     window (at least {@link #minBurst()})
     */
    public double burst() {
        return burst;
    }

    /** @return the fewest tokens the bucket may save, whatever the traffic */
    public double minBurst() {
        return minBurst;
    }

    /**
     * The {@link Builder#initialTokens(double) initial tokens} the executors and adapters give the
     * budgets they build: {@code min(20, 400 * ratio)}. A new client then hedges from its first
     * answers on (20 hedges at 5%, 4 at 1%, none below 0.25%), and after {@code P} primaries its
     * hedges still never exceed {@code max(initialTokens + 3 * ratio * P / 4, ratio * P)}: extra load
     * is at most the ratio from the 1,600th call on, and exactly zero at a ratio of zero.
     *
     * @param ratio the budget's ratio, in [0, 1]
     * @return tokens, in [0, 20]
     */
    public static double coldStartTokens(double ratio) {
        return Math.min(COLD_START_TOKENS, COLD_START_CALLS * Checks.closedRange("ratio", ratio, 0.0, 1.0));
    }

    /**
     * @return the tokens the bucket held when it was built (0 = none), an advance the first
     *     {@code 4 * initialTokens / ratio} primaries' deposits repay, a quarter of each
     */
    public double initialTokens() {
        return initialTokens;
    }

    /** @return the floor, in tokens per second, added to the ratio's tokens (0 = none) */
    public double minPerSecond() {
        return minPerSecond;
    }

    /**
     * @return the state now: counts in the window, tokens remaining (fractional; a grant needs at
     *     least 1; infinite for {@link #unlimited()}) and totals since creation. Weakly consistent
     *     under concurrent updates.
     */
    public BudgetSnapshot snapshot() {
        return account.snapshot(ratio);
    }

    @Override
    public String toString() {
        return unlimited
                ? "HedgeBudget[unlimited]"
                : "HedgeBudget[ratio=" + ratio + ", window=" + window + ", burst=" + burst + ", minBurst=" + minBurst
                        + ", initialTokens=" + initialTokens + ", minPerSecond="
                        + minPerSecond + "]";
    }

    /**
     * Builds a {@link HedgeBudget}; each setting is validated when set, with a message naming the
     * setting, its range and the value given. Not thread-safe; the budget it builds is.
     */
    public static final class Builder {
        /** The default {@link #minBurst(double)}. */
        public static final double DEFAULT_MIN_BURST = 75;

        private double ratio = 0.05;
        // 30 s, like the latency tracker's window: hedge demand at a (1 - ratio) delay uses the
        // whole budget on average, and a shorter window denies the random clusters of slow calls
        // that hedging exists for (hedge-benchmarks' tail simulator: 526 denials and p999 1.20x the
        // oracle on weibull:0.5,1 with 10 s, 378 and 1.15x with 30 s)
        private Duration window = Duration.ofSeconds(30);
        private double minPerSecond = 0;
        private double burst = 0.25;
        private double minBurst = DEFAULT_MIN_BURST;
        private double initialTokens = 0;
        private Ticker ticker = Ticker.system();

        private Builder() {}

        /**
         * @param ratio extra attempts allowed per primary call in the window, in [0, 1] (default
         *     0.05 = 5%); resolution 10<sup>-9</sup>
         * @return this builder
         */
        public Builder ratio(double ratio) {
            this.ratio = Checks.closedRange("ratio", ratio, 0, 1);
            return this;
        }

        /**
         * @param window the length of the sliding window over which primaries set the burst cap,
         *     {@code > 0} (default 30 s); it slides in steps of a thirtieth of its length
         * @return this builder
         */
        public Builder window(Duration window) {
            Checks.positiveNanos("window", window);
            this.window = window;
            return this;
        }

        /**
         * @param burst how many tokens the bucket may save, as a fraction of the tokens the window's
         *     primaries deposit, in [0, 10] (default 0.25); the bucket may always save {@link
         *     #minBurst(double)} tokens.
         *     Over any interval of one window's length at a steady rate, hedges stay within {@code (1 +
         *     burst) * ratio} of the primaries (plus one); a larger burst denies less on a fluctuating
         *     load and lets a latency shift spend more before the cap holds
         * @return this builder
         */
        public Builder burst(double burst) {
            this.burst = Checks.closedRange("burst", burst, 0, 10);
            return this;
        }

        /**
         * @param minBurst the fewest tokens the bucket may save, in [1, 1,000,000] (default {@value
         *     #DEFAULT_MIN_BURST}): at a small ratio or a low rate, {@code burst * ratio *
         *     primariesInWindow} is a handful of tokens, too few to absorb the random fluctuations
         *     of demand, so the budget would deny the slow calls hedging is for. Tokens still come
         *     only from primaries; this only lets more of them be saved. Why 75: demand for hedges
         *     fluctuates in whole hedges, whatever the rate; over the smallest window an adaptive
         *     delay estimates from it varies by about 14 (the count's own noise and the estimate's)
         *     with 100 samples beyond the percentile, as when 75 was chosen (about five times
         *     that), and by about 24 with the 300 kept since ({@link
         *     PercentileDelay#windowSamples()}; about three times). With the
         *     former default of 20, hedge-benchmarks' sweep at 100 calls/s and a 1% budget had
         *     hedged p99.9 up to 1.081x the oracle; with 75 alone, at most 1.052x (at 1,000 calls/s,
         *     where the burst is about 75 tokens anyway: 1.039x and 1.042x); the current
         *     figures are in {@code docs/benchmarks.md#other-request-rates}
         * @return this builder
         */
        public Builder minBurst(double minBurst) {
            this.minBurst = Checks.closedRange("minBurst", minBurst, 1, 1_000_000);
            return this;
        }

        /**
         * @param initialTokens the tokens in the bucket when it is built, in [0, {@link
         *     #minBurst(double) minBurst}] (default 0): a new client can then hedge its first
         *     calls, before its primaries have deposited a whole token (at 5% that takes 20 calls),
         *     which is when it knows least about its backends. They are an advance, not a gift:
         *     a quarter of each deposit repays it until the primaries have deposited four times the
         *     advance, so after {@code P} primaries hedges never exceed {@code max(initialTokens + 3
         *     * ratio * P / 4, ratio * P)}, and extra load in the long run is the ratio's, as for a
         *     budget built without them. A client that spends the advance in its first calls keeps
         *     three quarters of the ratio meanwhile (3 hedges per 80 calls at 5%), so stalls among
         *     those calls are still hedged; the advance is repaid after {@code 4 * initialTokens /
         *     ratio} primaries (1,600 for 20 tokens at 5%), spent or not
         * @return this builder
         */
        public Builder initialTokens(double initialTokens) {
            this.initialTokens = Checks.closedRange("initialTokens", initialTokens, 0, 1_000_000);
            return this;
        }

        /**
         * @param minPerSecond a floor of tokens per second, {@code >= 0} (default 0: no floor): the
         *     bucket gains that many tokens per second on top of the primaries' deposits, and may save
         *     {@code minPerSecond * windowSeconds} more (it starts with them), so a little hedging is
         *     possible even without traffic. It lets extra load exceed the ratio by up to that many
         *     attempts per second plus the saved floor tokens.
         * @return this builder
         */
        public Builder minPerSecond(double minPerSecond) {
            this.minPerSecond = Checks.finiteNonNegative("minPerSecond", minPerSecond);
            return this;
        }

        /**
         * @param ticker the time source, in nanoseconds (default {@link Ticker#system()}); a virtual
         *     one in tests
         * @return this builder
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Checks.notNull("ticker", ticker);
            return this;
        }

        /**
         * @return a new budget with these settings; its window starts now (per the ticker)
         * @throws IllegalArgumentException if {@code initialTokens > minBurst}
         */
        public HedgeBudget build() {
            if (initialTokens > minBurst) {
                throw new IllegalArgumentException(
                        "initialTokens must be in [0, minBurst = " + minBurst + "], was " + initialTokens);
            }
            return new HedgeBudget(this, false);
        }
    }
}

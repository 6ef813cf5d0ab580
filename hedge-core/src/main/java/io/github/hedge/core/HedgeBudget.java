package io.github.hedge.core;

import io.github.hedge.core.internal.Checks;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
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
 * deposit). {@link Builder#initialTokens(double) Initial tokens} do not change that in the long
 * run: they are an advance on the deposits of the first primaries, half of each deposit repaying it
 * until it is repaid, so after {@code P} primaries hedges never exceed {@code max(initialTokens +
 * ratio * P / 2, ratio * P)}, which is {@code ratio * P} from {@code P = 2 * initialTokens / ratio}
 * on. A ratio of 1
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
    /**
     * Number of buckets in the window. The recent rate that caps saved tokens is read from the last
     * one or two buckets, so this sets how soon the cap follows a falling rate: with 10 (3-6 s of a
     * 30 s window) a closed loop whose backend turned 5x slower spent tokens saved at the old rate
     * for 6 s, hedging 15-25% of its calls at a 5% budget (hedge-benchmarks' {@code closed-shift}
     * and Cassandra {@code SideBySide}); with 30 (1-2 s) for 3 s. Stationary loads do not see the
     * difference (the simulator's {@code sweep}: the same denials in every cell).
     */
    private static final int BUCKETS = 30;
    /** The most initial tokens {@link #coldStartTokens} gives. */
    private static final double COLD_START_TOKENS = 20;
    /** The calls whose deposits {@link #coldStartTokens} advances. */
    private static final double COLD_START_CALLS = 400;
    /** One token in fixed point. */
    private static final long SCALE = 1_000_000_000L;

    private final boolean unlimited;
    private final double ratio;
    private final Duration window;
    private final double minPerSecond;
    private final double burst;
    private final double minBurst;
    private final double initialTokens;
    private final Ticker ticker;
    /** minBurst in units of 1/SCALE token. */
    private final long minBurstScaled;
    /** burst * ratio in units of 1/SCALE token per primary of the window. */
    private final long burstScaled;
    /** ratio in units of 1/SCALE token per primary. */
    private final long ratioScaled;
    /** minPerSecond * windowSeconds in units of 1/SCALE token. */
    private final long floorScaled;

    private final long bucketNanos;
    private final long origin;
    private final AtomicReferenceArray<Bucket> ring = new AtomicReferenceArray<>(BUCKETS);
    /** The latest bucket rotated in; a hint for the fast path, never trusted without a range check. */
    private volatile Bucket current;

    private final Object grantLock = new Object();
    /** Every primary ever recorded; the bucket deposits {@code ratio} tokens for each. */
    private final LongAdder primariesTotal = new LongAdder();
    // guarded by grantLock; volatile for the lock-free pre-check and snapshot
    private volatile long balanceScaled;
    /** What is left of the initial tokens' advance, scaled: half of each deposit repays it. */
    private volatile long debtScaled;

    private volatile long accountedPrimaries;
    /** The cap at the latest accrual, scaled; for {@link #availableTokens()}. */
    private volatile long lastCapScaled;

    private long lastAccrualNanos;
    private final LongAdder totalGranted = new LongAdder();
    private final LongAdder totalDenied = new LongAdder();

    private HedgeBudget(Builder b, boolean unlimited) {
        this.unlimited = unlimited;
        this.ratio = unlimited ? Double.POSITIVE_INFINITY : b.ratio;
        this.window = b.window;
        this.minPerSecond = b.minPerSecond;
        this.burst = b.burst;
        this.minBurst = b.minBurst;
        this.minBurstScaled = Math.round(b.minBurst * SCALE);
        this.initialTokens = b.initialTokens;
        this.ticker = b.ticker;
        long windowNanos = Checks.positiveNanos("window", b.window);
        this.ratioScaled = Math.round(b.ratio * SCALE);
        // tokens = minPerSecond * windowNanos / 1e9; scaled by SCALE (= 1e9) that is minPerSecond * windowNanos
        this.floorScaled = Math.round(b.minPerSecond * windowNanos); // saturates at Long.MAX_VALUE
        this.burstScaled = Math.round(b.burst * b.ratio * SCALE);
        this.bucketNanos = Math.max(1, windowNanos / BUCKETS);
        this.origin = ticker.nanoTime();
        for (int i = 0; i < BUCKETS; i++) {
            ring.set(i, new Bucket(i - BUCKETS, 0, 0)); // empty, already out of the window
        }
        Bucket first = new Bucket(0, origin, origin + bucketNanos);
        ring.set(0, first);
        this.current = first;
        // a floor can be used at once, as the window it stands for; so can the initial tokens,
        // which the first deposits repay
        long advance = Math.round(b.initialTokens * SCALE);
        this.balanceScaled = satAdd(floorScaled, advance);
        this.debtScaled = advance;
        this.lastAccrualNanos = origin;
        this.lastCapScaled = Math.max(minBurstScaled, SCALE) + floorScaled;
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
        long now = nowNanos;
        primariesTotal.increment();
        Bucket c = current;
        if (now >= c.start && now < c.end) {
            c.primaries.increment();
        } else {
            bucketAt(now).primaries.increment();
        }
    }

    /**
     * Takes one token for an extra attempt.
     *
     * @return {@code true} if granted (counted as a hedge in the window); {@code false} if there is
     *     no whole token left (and one denial is counted)
     */
    public boolean tryAcquire() {
        if (unlimited) {
            bucketAt(ticker.nanoTime()).hedges.incrementAndGet();
            totalGranted.increment();
            return true;
        }
        // Lock-free pre-check: the balance plus every deposit not yet accounted, ignoring the cap,
        // the floor's accrual and what the deposits will repay of an advance (so it can only
        // over-state the tokens); denying on it is always safe when there is no floor.
        if (floorScaled == 0 && satAdd(balanceScaled, unaccountedDeposits()) < SCALE) {
            totalDenied.increment();
            return false;
        }
        synchronized (grantLock) {
            long now = ticker.nanoTime();
            Bucket bucket = bucketAt(now);
            long balance = accrue(now);
            if (balance >= SCALE) {
                balanceScaled = balance - SCALE;
                bucket.hedges.incrementAndGet();
                totalGranted.increment();
                return true;
            }
        }
        totalDenied.increment();
        return false;
    }

    /** Under the lock: adds the deposits since the last call, applies the cap, stores and returns the balance. */
    private long accrue(long now) {
        long primaries = primariesTotal.sum();
        long fresh = primaries - accountedPrimaries;
        accountedPrimaries = primaries;
        long deposit = satMul(ratioScaled, fresh);
        long debt = debtScaled;
        if (debt > 0 && deposit > 0) {
            long repay = repayment(debt, deposit);
            debtScaled = debt - repay;
            deposit -= repay;
        }
        long balance = satAdd(balanceScaled, deposit);
        long elapsed = now - lastAccrualNanos;
        if (elapsed > 0) {
            lastAccrualNanos = now;
            if (floorScaled > 0) {
                balance = satAdd(balance, (long) Math.min(Long.MAX_VALUE, minPerSecond * elapsed));
            }
        }
        long cap = capScaled(Math.min(countsAt(epochOf(now)).primaries, recentPrimaries(now)));
        if (balance > cap) {
            balance = cap;
        }
        lastCapScaled = cap;
        balanceScaled = balance;
        return balance;
    }

    /**
     * What a deposit repays of the advance: half of it (rounded up), so the bucket still earns half
     * the ratio while the advance is owed. A client that spent its advance on its first calls thus
     * never goes without tokens for hundreds of calls, which would leave the stalls among them
     * unhedged; it repays the advance over {@code 2 * initialTokens / ratio} primaries instead.
     */
    private static long repayment(long debt, long deposit) {
        return Math.min(debt, deposit - deposit / 2);
    }

    /** The most tokens the bucket holds when the window holds {@code windowPrimaries}, scaled. */
    private long capScaled(long windowPrimaries) {
        return satAdd(Math.max(minBurstScaled, satMul(burstScaled, windowPrimaries)), floorScaled);
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
        if (unlimited) {
            return Double.POSITIVE_INFINITY;
        }
        long b = Math.min(satAdd(balanceScaled, pendingDeposits()), lastCapScaled);
        return Math.max(0, b) / (double) SCALE;
    }

    /**
     * A lock-free estimate of how full the bucket is on its own means: {@link #availableTokens()},
     * less what is still owed of the initial tokens' advance, over the latest cap. A budget whose
     * tokens are mostly the advance reads nearly empty, so a delay policy with budget feedback asks
     * for less while the first deposits go to repaying it.
     *
     * @return in [0, 1]; 1 for {@link #unlimited()}
     */
    public double fill() {
        if (unlimited) {
            return 1.0;
        }
        long cap = lastCapScaled;
        long owned = satAdd(balanceScaled, unaccountedDeposits()) - debtScaled;
        return Math.max(0, Math.min(owned, cap)) / (double) cap;
    }

    /** Deposits not yet accounted, less what they will repay of the advance; lock-free, weakly consistent. */
    private long pendingDeposits() {
        long deposits = unaccountedDeposits();
        long debt = debtScaled;
        return debt > 0 && deposits > 0 ? deposits - repayment(debt, deposits) : Math.max(0, deposits);
    }

    /** Deposits of the primaries since the last accrual, scaled, before any repayment; lock-free. */
    private long unaccountedDeposits() {
        return satMul(ratioScaled, primariesTotal.sum() - accountedPrimaries);
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
     * hedges still never exceed {@code max(initialTokens + ratio * P / 2, ratio * P)}: extra load is
     * at most the ratio from the 800th call on, and exactly zero at a ratio of zero.
     *
     * @param ratio the budget's ratio, in [0, 1]
     * @return tokens, in [0, 20]
     */
    public static double coldStartTokens(double ratio) {
        return Math.min(COLD_START_TOKENS, COLD_START_CALLS * Checks.closedRange("ratio", ratio, 0.0, 1.0));
    }

    /**
     * @return the tokens the bucket held when it was built (0 = none), an advance that half the
     *     deposits of the first {@code 2 * initialTokens / ratio} primaries repay
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
        long now = ticker.nanoTime();
        Counts window = countsAt(epochOf(now));
        long primaries = window.primaries;
        long hedges = window.hedges;
        double remaining;
        if (unlimited) {
            remaining = Double.POSITIVE_INFINITY;
        } else {
            long balance;
            synchronized (grantLock) {
                balance = accrue(now);
            }
            remaining = Math.max(0, balance) / (double) SCALE;
        }
        return new BudgetSnapshot(ratio, primaries, hedges, remaining, totalGranted.sum(), totalDenied.sum());
    }

    @Override
    public String toString() {
        return unlimited
                ? "HedgeBudget[unlimited]"
                : "HedgeBudget[ratio=" + ratio + ", window=" + window + ", burst=" + burst + ", minBurst=" + minBurst
                        + ", initialTokens=" + initialTokens + ", minPerSecond="
                        + minPerSecond + "]";
    }

    // ---- window ----

    private long epochOf(long now) {
        long elapsed = now - origin;
        return elapsed <= 0 ? 0 : elapsed / bucketNanos;
    }

    /** The bucket for {@code now}, rotating the ring if the ticker passed into a new bucket. */
    private Bucket bucketAt(long now) {
        long epoch = epochOf(now);
        int slot = (int) (epoch % BUCKETS);
        Bucket b = ring.get(slot);
        while (b.epoch < epoch) {
            long start = origin + epoch * bucketNanos;
            Bucket fresh = new Bucket(epoch, start, start + bucketNanos);
            if (ring.compareAndSet(slot, b, fresh)) {
                if (fresh.epoch > current.epoch) {
                    current = fresh; // a racing stale write only sends callers to this slow path
                }
                return fresh;
            }
            b = ring.get(slot);
        }
        // b.epoch > epoch only for a caller whose reading went stale meanwhile: count it a bit later
        return b;
    }

    /**
     * The primaries a whole window would hold at the recent rate: those of the current bucket and
     * the one before it, scaled from the time they span to the window's length. After the rate drops
     * (a backend that turns slow slows a closed-loop client down), the window still counts the old
     * rate for its whole length, and the tokens saved at the old rate would let hedges run above the
     * ratio for many seconds at the new one; the cap follows the recent rate within one to two
     * thirtieths of the window instead. It only ever lowers the cap ({@code min} with the window).
     */
    private long recentPrimaries(long now) {
        long epoch = epochOf(now);
        Bucket cur = ring.get((int) (epoch % BUCKETS));
        long primaries = 0;
        long span = 0;
        if (cur.epoch == epoch) {
            primaries += cur.primaries.sum();
            span += Math.max(0, now - cur.start);
        }
        if (epoch > 0) {
            Bucket prev = ring.get((int) ((epoch - 1) % BUCKETS));
            if (prev.epoch == epoch - 1) {
                primaries += prev.primaries.sum();
                span += bucketNanos;
            }
        }
        if (span <= 0) {
            return Long.MAX_VALUE; // nothing to go by: the window decides
        }
        double scaled = (double) primaries * (BUCKETS * (double) bucketNanos) / span;
        return scaled >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) scaled;
    }

    /** Primaries and hedges in the window ending at {@code epoch}. */
    private Counts countsAt(long epoch) {
        long primaries = 0;
        long hedges = 0;
        for (int i = 0; i < BUCKETS; i++) {
            Bucket b = ring.get(i);
            if (b.epoch > epoch - BUCKETS) {
                primaries += b.primaries.sum();
                hedges += b.hedges.get();
            }
        }
        return new Counts(primaries, hedges);
    }

    private record Counts(long primaries, long hedges) {}

    private static long satMul(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if ((hi == 0 && lo >= 0) || (hi == -1 && lo < 0)) {
            return lo;
        }
        return (a ^ b) < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }

    private static long satAdd(long a, long b) {
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /** One slice of the window. Immutable identity; counters are thread-safe. */
    private static final class Bucket {
        final long epoch;
        /** Ticker reading at which the bucket starts (inclusive) and ends (exclusive), in ns. */
        final long start;

        final long end;
        final LongAdder primaries = new LongAdder();
        final AtomicLong hedges = new AtomicLong();

        Bucket(long epoch, long start, long end) {
            this.epoch = epoch;
            this.start = start;
            this.end = end;
        }
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
         *     where the burst is about 75 tokens anyway: 1.039x and 1.042x); see {@code
         *     docs/benchmarks.md} section 2.6 for the later changes that bring it to 1.032x
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
         *     half of each deposit repays it until the primaries have deposited twice the advance,
         *     so after {@code P} primaries hedges never exceed {@code max(initialTokens + ratio *
         *     P / 2, ratio * P)}, and extra load in the long run is the ratio's, as for a budget
         *     built without them. A client that spends the advance in its first calls keeps half
         *     the ratio meanwhile (a hedge per 40 calls at 5%) rather than none, so stalls among
         *     those calls are still hedged; the advance is repaid after {@code 2 * initialTokens /
         *     ratio} primaries (800 for 20 tokens at 5%), spent or not
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

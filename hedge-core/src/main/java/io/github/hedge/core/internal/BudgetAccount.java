package io.github.hedge.core.internal;

import io.github.hedge.core.BudgetSnapshot;
import io.github.hedge.core.spi.Ticker;
import java.util.concurrent.atomic.LongAdder;

/**
 * The accounting of a {@code HedgeBudget}: the token balance that primaries fill and grants
 * spend, the advance of the initial tokens that deposits repay, and the counts of its {@link
 * BudgetWindow}. The rule it applies (ratio, burst, floor) is the budget's, given to it once.
 * Tokens are kept in fixed point, in units of 10<sup>-9</sup> token.
 *
 * <p>Internal: not part of the public API. Thread-safe: {@link #recordPrimary} is lock-free; a
 * grant that may succeed takes a short lock.
 */
public final class BudgetAccount {
    /** One token in fixed point. */
    private static final long SCALE = 1_000_000_000L;
    /**
     * A deposit repays {@code 1 / REPAY_PARTS} of itself while an advance is owed: a quarter, so the
     * bucket still earns three quarters of the ratio then (with half, a slow share between half the
     * ratio and the ratio outran supply for hundreds of calls, and the supply floor lifted the delay
     * into the slow mode).
     */
    private static final long REPAY_PARTS = 4;

    private final boolean unlimited;
    private final double minPerSecond;
    private final Ticker ticker;
    /** minBurst in units of 1/SCALE token. */
    private final long minBurstScaled;
    /** burst * ratio in units of 1/SCALE token per primary of the window. */
    private final long burstScaled;
    /** ratio in units of 1/SCALE token per primary. */
    private final long ratioScaled;
    /** minPerSecond * windowSeconds in units of 1/SCALE token. */
    private final long floorScaled;

    private final BudgetWindow window;

    private final Object grantLock = new Object();
    /** Every primary ever recorded; the bucket deposits {@code ratio} tokens for each. */
    private final LongAdder primariesTotal = new LongAdder();
    // guarded by grantLock; volatile for the lock-free pre-check and snapshot
    private volatile long balanceScaled;
    /** What is left of the initial tokens' advance, scaled: a quarter of each deposit repays it. */
    private volatile long debtScaled;

    private volatile long accountedPrimaries;
    /** The cap at the latest accrual, scaled; for {@link #availableTokens()}. */
    private volatile long lastCapScaled;

    private long lastAccrualNanos;
    private final LongAdder totalGranted = new LongAdder();
    private final LongAdder totalDenied = new LongAdder();

    /**
     * @param unlimited whether it never denies
     * @param ratio tokens per primary, in [0, 1]
     * @param windowNanos the window's length, in ns
     * @param minPerSecond the floor, in tokens per second
     * @param burst the burst, as a fraction of the window's deposits
     * @param minBurst the fewest tokens the bucket may save
     * @param initialTokens the advance the bucket starts with
     * @param ticker the time source; read once here, where the window starts
     */
    public BudgetAccount(
            boolean unlimited,
            double ratio,
            long windowNanos,
            double minPerSecond,
            double burst,
            double minBurst,
            double initialTokens,
            Ticker ticker) {
        this.unlimited = unlimited;
        this.minPerSecond = minPerSecond;
        this.minBurstScaled = Math.round(minBurst * SCALE);
        this.ticker = ticker;
        this.ratioScaled = Math.round(ratio * SCALE);
        // tokens = minPerSecond * windowNanos / 1e9; scaled by SCALE (= 1e9) that is minPerSecond * windowNanos
        this.floorScaled = Math.round(minPerSecond * windowNanos); // saturates at Long.MAX_VALUE
        this.burstScaled = Math.round(burst * ratio * SCALE);
        long origin = ticker.nanoTime();
        this.window = new BudgetWindow(windowNanos, origin);
        // a floor can be used at once, as the window it stands for; so can the initial tokens,
        // which the first deposits repay
        long advance = Math.round(initialTokens * SCALE);
        this.balanceScaled = satAdd(floorScaled, advance);
        this.debtScaled = advance;
        this.lastAccrualNanos = origin;
        this.lastCapScaled = Math.max(minBurstScaled, SCALE) + floorScaled;
    }

    /** Counts one primary at {@code now}, a reading of the budget's ticker. Lock-free. */
    public void recordPrimary(long now) {
        primariesTotal.increment();
        window.recordPrimary(now);
    }

    /** @return whether one token was taken for an extra attempt; a denial is counted */
    public boolean tryAcquire() {
        if (unlimited) {
            window.bucketAt(ticker.nanoTime()).hedges.incrementAndGet();
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
            BudgetWindow.Bucket bucket = window.bucketAt(now);
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
        long cap = capScaled(Math.min(window.countsAt(window.epochOf(now)).primaries(), window.recentPrimaries(now)));
        if (balance > cap) {
            balance = cap;
        }
        lastCapScaled = cap;
        balanceScaled = balance;
        return balance;
    }

    /** The most tokens the bucket holds when the window holds {@code windowPrimaries}, scaled. */
    private long capScaled(long windowPrimaries) {
        return satAdd(Math.max(minBurstScaled, satMul(burstScaled, windowPrimaries)), floorScaled);
    }

    /** @return the tokens a grant could take now, lock-free; infinite when unlimited */
    public double availableTokens() {
        if (unlimited) {
            return Double.POSITIVE_INFINITY;
        }
        long b = Math.min(satAdd(balanceScaled, pendingDeposits()), lastCapScaled);
        return Math.max(0, b) / (double) SCALE;
    }

    /**
     * @param calls the next primaries, at least 1
     * @return the share of the next primaries the bucket could pay a hedge for: the tokens a grant
     *     could take now plus what those primaries deposit for its own use (the ratio, less what
     *     repays the advance), over {@code calls} or over the primaries that repay what is left of
     *     the advance, if more; lock-free; infinite when unlimited
     */
    public double supply(long calls) {
        if (unlimited) {
            return Double.POSITIVE_INFINITY;
        }
        long debt = debtScaled;
        long pending = unaccountedDeposits();
        if (debt > 0 && pending > 0) {
            debt -= repayment(debt, pending); // what the deposits not yet accounted will repay
        }
        long n = Math.max(1, calls);
        if (debt > 0 && ratioScaled > 0) {
            // a quarter of each deposit repays the advance: 4 * debt / ratio primaries
            n = Math.max(n, (long) Math.ceil((double) REPAY_PARTS * debt / ratioScaled));
        }
        long deposits = satMul(ratioScaled, n);
        long own = debt > 0 && deposits > 0 ? deposits - repayment(debt, deposits) : deposits;
        return (availableTokens() + own / (double) SCALE) / n;
    }

    /**
     * @return how full the bucket is, in [0, 1], lock-free; 1 when unlimited. Tokens of the advance
     *     count: a quarter of each deposit repays it, so the tokens held are the bucket's to spend
     */
    public double fill() {
        if (unlimited) {
            return 1.0;
        }
        long cap = lastCapScaled;
        long held = satAdd(balanceScaled, unaccountedDeposits());
        return Math.max(0, Math.min(held, cap)) / (double) cap;
    }

    /**
     * What a deposit repays of the advance: a quarter of it (rounded up), so the bucket still earns
     * three quarters of the ratio while the advance is owed. A client that spent its advance on its
     * first calls thus never goes without tokens for hundreds of calls, which would leave the stalls
     * among them unhedged; it repays the advance over {@code 4 * initialTokens / ratio} primaries
     * instead.
     */
    private static long repayment(long debt, long deposit) {
        return Math.min(debt, deposit - deposit * (REPAY_PARTS - 1) / REPAY_PARTS);
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

    /**
     * @param ratio the budget's ratio, as it reports it
     * @return the state now: the window's counts, the tokens remaining, the totals
     */
    public BudgetSnapshot snapshot(double ratio) {
        long now = ticker.nanoTime();
        BudgetWindow.Counts counts = window.countsAt(window.epochOf(now));
        long primaries = counts.primaries();
        long hedges = counts.hedges();
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
}

package io.github.hedge.core;

import io.github.hedge.core.spi.Ticker;
import java.time.Duration;

/**
 * Caps extra attempts at a ratio of primary calls over a sliding window. (API shell.)
 */
public final class HedgeBudget {
    private HedgeBudget() {}

    public static Builder builder() {
        return new Builder();
    }

    /** A budget of {@code ratio} extra attempts per primary call (0.05 = 5%), default window. */
    public static HedgeBudget ofRatio(double ratio) {
        return builder().ratio(ratio).build();
    }

    /** A budget that never denies. */
    public static HedgeBudget unlimited() {
        return builder().ratio(1.0).build();
    }

    /** Counts one primary call. */
    public void recordPrimary() {
        throw new UnsupportedOperationException();
    }

    /** Takes one token for an extra attempt; false (and one denial counted) when there is none. */
    public boolean tryAcquire() {
        throw new UnsupportedOperationException();
    }

    public double ratio() {
        throw new UnsupportedOperationException();
    }

    public BudgetSnapshot snapshot() {
        throw new UnsupportedOperationException();
    }

    public static final class Builder {
        public Builder ratio(double ratio) {
            return this;
        }

        public Builder window(Duration window) {
            return this;
        }

        public Builder minPerSecond(double minPerSecond) {
            return this;
        }

        public Builder ticker(Ticker ticker) {
            return this;
        }

        public HedgeBudget build() {
            return new HedgeBudget();
        }
    }
}

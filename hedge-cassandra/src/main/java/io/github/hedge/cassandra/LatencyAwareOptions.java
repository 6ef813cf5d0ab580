package io.github.hedge.cassandra;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of latency-aware node ordering (the idea of the 3.x driver's {@code LatencyAwarePolicy}):
 * each node's score is the median of its first {@code minMeasurements} measurements, then a
 * time-decayed average of measurements clipped at 4 times the score (so one answer from a healthy
 * node's heavy tail moves it little); a node whose score exceeds {@code
 * exclusionThreshold} times its peers' (the lower median of the nodes' scores) goes to the back of the query plan, so primaries stop
 * going to it and hedges go to healthy nodes. An excluded node receives no primaries, hence no new
 * measurements; once {@code retryPeriod} passes without one, it is tried again and scored afresh
 * from its next {@code minMeasurements} measurements. A reference under 1 ms counts as 1 ms, so that
 * sub-millisecond noise (loopback, a busy client) cannot exclude a healthy node.
 *
 * <p>Units: durations; the threshold is a ratio. Immutable and thread-safe.
 */
public final class LatencyAwareOptions {
    private static final LatencyAwareOptions DEFAULTS = builder().build();
    private static final LatencyAwareOptions DISABLED = builder().enabled(false).build();

    private final boolean enabled;
    private final double exclusionThreshold;
    private final Duration scale;
    private final Duration retryPeriod;
    private final int minMeasurements;

    private LatencyAwareOptions(Builder b) {
        this.enabled = b.enabled;
        this.exclusionThreshold = b.exclusionThreshold;
        this.scale = b.scale;
        this.retryPeriod = b.retryPeriod;
        this.minMeasurements = b.minMeasurements;
    }

    /** @return enabled, threshold 2.0, scale 100 ms, retry period 10 s, 5 measurements */
    public static LatencyAwareOptions ofDefaults() {
        return DEFAULTS;
    }

    /** @return options that turn latency-aware ordering off */
    public static LatencyAwareOptions disabled() {
        return DISABLED;
    }

    /** @return a builder with the defaults of {@link #ofDefaults()} */
    public static Builder builder() {
        return new Builder();
    }

    /** @return whether nodes are reordered by latency */
    public boolean enabled() {
        return enabled;
    }

    /** @return how many times its peers' score (the lower median) a node's score must exceed to be excluded */
    public double exclusionThreshold() {
        return exclusionThreshold;
    }

    /** @return the time constant of the decaying average: older measurements weigh e times less per scale */
    public Duration scale() {
        return scale;
    }

    /** @return how long an excluded node stays excluded without a new measurement */
    public Duration retryPeriod() {
        return retryPeriod;
    }

    /** @return measurements a node needs before its average counts */
    public int minMeasurements() {
        return minMeasurements;
    }

    @Override
    public String toString() {
        return "LatencyAwareOptions{enabled=" + enabled + ", exclusionThreshold=" + exclusionThreshold + ", scale="
                + scale + ", retryPeriod=" + retryPeriod + ", minMeasurements=" + minMeasurements + '}';
    }

    /** Builds {@link LatencyAwareOptions}; validates each setting as it is set. Not thread-safe. */
    public static final class Builder {
        private boolean enabled = true;
        private double exclusionThreshold = 2.0;
        private Duration scale = Duration.ofMillis(100);
        private Duration retryPeriod = Duration.ofSeconds(10);
        private int minMeasurements = 5;

        private Builder() {}

        /**
         * @param enabled whether to reorder nodes by latency
         * @return this
         */
        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        /**
         * @param threshold in (1, 1000]; default 2.0
         * @return this
         */
        public Builder exclusionThreshold(double threshold) {
            if (!(threshold > 1.0 && threshold <= 1000.0)) {
                throw new IllegalArgumentException("exclusionThreshold must be in (1, 1000], was " + threshold);
            }
            this.exclusionThreshold = threshold;
            return this;
        }

        /**
         * @param scale > 0; default 100 ms
         * @return this
         */
        public Builder scale(Duration scale) {
            this.scale = positive("scale", scale);
            return this;
        }

        /**
         * @param retryPeriod > 0; default 10 s
         * @return this
         */
        public Builder retryPeriod(Duration retryPeriod) {
            this.retryPeriod = positive("retryPeriod", retryPeriod);
            return this;
        }

        /**
         * @param minMeasurements in [1, 100000]; default 5
         * @return this
         */
        public Builder minMeasurements(int minMeasurements) {
            if (minMeasurements < 1 || minMeasurements > 100_000) {
                throw new IllegalArgumentException("minMeasurements must be in [1, 100000], was " + minMeasurements);
            }
            this.minMeasurements = minMeasurements;
            return this;
        }

        /** @return the options */
        public LatencyAwareOptions build() {
            return new LatencyAwareOptions(this);
        }

        static Duration positive(String name, Duration d) {
            Objects.requireNonNull(d, name + " must not be null");
            if (d.isNegative() || d.isZero() || d.compareTo(Duration.ofDays(365)) > 0) {
                throw new IllegalArgumentException(name + " must be in (0, 365 days], was " + d);
            }
            return d;
        }
    }
}

package io.github.hedge.grpc.internal;

import io.grpc.LoadBalancerProvider;
import io.grpc.LoadBalancerRegistry;
import java.time.Duration;
import java.util.Map;

/** The parsed {@code hedge_round_robin} config. Immutable. */
public final class BalancerConfig {
    /** The policy's name in grpc's registry and in service configs: {@value}. */
    public static final String POLICY_NAME = "hedge_round_robin";

    static final BalancerConfig DEFAULTS = new BalancerConfig("round_robin", 3.0, 20, Duration.ofSeconds(5));

    final String childPolicy;
    final double slowRatio;
    final int minSamples;
    final Duration window;

    BalancerConfig(String childPolicy, double slowRatio, int minSamples, Duration window) {
        this.childPolicy = childPolicy;
        this.slowRatio = slowRatio;
        this.minSamples = minSamples;
        this.window = window;
    }

    /**
     * @param raw the JSON object of the service config, or {@code null}
     * @return the config
     * @throws IllegalArgumentException naming the key, its valid range and the value
     */
    public static BalancerConfig parse(Map<String, ?> raw) {
        if (raw == null || raw.isEmpty()) {
            return DEFAULTS;
        }
        String child = DEFAULTS.childPolicy;
        Object c = raw.get("childPolicy");
        if (c != null) {
            if (!(c instanceof String)) {
                throw new IllegalArgumentException("childPolicy must be a policy name (a string), was " + c);
            }
            child = (String) c;
            if (child.equals(POLICY_NAME)) {
                throw new IllegalArgumentException("childPolicy must not be hedge_round_robin itself");
            }
            LoadBalancerProvider p = LoadBalancerRegistry.getDefaultRegistry().getProvider(child);
            if (p == null) {
                throw new IllegalArgumentException("childPolicy must be a registered policy, was \"" + child + "\"");
            }
        }
        double ratio = number(raw, "slowRatio", DEFAULTS.slowRatio);
        if (!(ratio > 1.0) || Double.isInfinite(ratio)) {
            throw new IllegalArgumentException("slowRatio must be > 1, was " + ratio);
        }
        double min = number(raw, "minSamples", DEFAULTS.minSamples);
        if (min < 1 || min > 1_000_000 || min != Math.rint(min)) {
            throw new IllegalArgumentException("minSamples must be an integer in [1, 1000000], was " + min);
        }
        double window = number(raw, "windowSeconds", DEFAULTS.window.toMillis() / 1000.0);
        if (!(window >= 1 && window <= 600)) {
            throw new IllegalArgumentException("windowSeconds must be in [1, 600], was " + window);
        }
        return new BalancerConfig(child, ratio, (int) min, Duration.ofMillis((long) (window * 1000)));
    }

    private static double number(Map<String, ?> raw, String key, double dflt) {
        Object v = raw.get(key);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof Number)) {
            throw new IllegalArgumentException(key + " must be a number, was " + v);
        }
        return ((Number) v).doubleValue();
    }

    @Override
    public String toString() {
        return "hedge_round_robin{childPolicy=" + childPolicy + ", slowRatio=" + slowRatio + ", minSamples="
                + minSamples + ", window=" + window + "}";
    }
}

package io.github.hedge.grpc.internal;

import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.PickSubchannelArgs;
import io.grpc.LoadBalancer.Subchannel;
import io.grpc.LoadBalancer.SubchannelPicker;
import java.util.List;
import java.util.Set;

/**
 * Wraps the child policy's picker: asks it again (up to {@link #MAX_PICKS} times in all) while it
 * offers a backend the call already tried (from {@link Keys#TRIED_TARGETS}) or one that is slow,
 * and takes the first that is neither; failing that, the first untried one; failing that, the
 * child's first choice. Every pick gets the subchannel's latency tracer. Thread-safe, as pickers
 * must be.
 *
 * <p>A backend turned down still uses up its turn of a {@code round_robin} child's rotation, and the
 * next pick takes the next turn: no backend inherits the excluded one's turns, so primaries stay
 * evenly spread over the backends left in the rotation.
 */
final class HedgePicker extends SubchannelPicker {
    static final int MAX_PICKS = 8;

    private final SubchannelPicker child;
    private final BackendLatency latency;

    HedgePicker(SubchannelPicker child, BackendLatency latency) {
        this.child = child;
        this.latency = latency;
    }

    @Override
    public PickResult pickSubchannel(PickSubchannelArgs args) {
        PickResult first = child.pickSubchannel(args);
        if (first.getSubchannel() == null) {
            return first;
        }
        List<String> tried = args.getCallOptions().getOption(Keys.TRIED_TARGETS);
        Set<String> slow = latency.slow();
        if (tried.isEmpty() && slow.isEmpty()) {
            return placed(traced(first));
        }
        if (tried.size() == 1) {
            latency.primaryOverdue(tried.get(0)); // a first hedge: its primary did not answer in time
        }
        PickResult untried = null;
        PickResult r = first;
        for (int i = 1; ; i++) {
            String a = address(r.getSubchannel());
            boolean wasTried = a != null && tried.contains(a);
            if (!wasTried) {
                if (a == null || !slow.contains(a)) {
                    return tried.isEmpty() ? placed(traced(r)) : traced(r);
                }
                if (untried == null) {
                    untried = r;
                }
            }
            if (i >= MAX_PICKS) {
                break;
            }
            r = child.pickSubchannel(args);
            if (r.getSubchannel() == null) {
                break;
            }
        }
        PickResult chosen = traced(untried != null ? untried : first);
        return tried.isEmpty() ? placed(chosen) : chosen;
    }

    /** Counts a primary placed on the result's backend (for the balancer's stall test). */
    private PickResult placed(PickResult r) {
        String a = address(r.getSubchannel());
        if (a != null) {
            latency.primaryPlaced(a);
        }
        return r;
    }

    private static String address(Subchannel s) {
        return s instanceof HedgeLoadBalancer.TrackedSubchannel
                ? ((HedgeLoadBalancer.TrackedSubchannel) s).address
                : null;
    }

    private static PickResult traced(PickResult r) {
        Subchannel s = r.getSubchannel();
        if (r.getStreamTracerFactory() == null && s instanceof HedgeLoadBalancer.TrackedSubchannel) {
            return r.copyWithStreamTracerFactory(((HedgeLoadBalancer.TrackedSubchannel) s).tracerFactory);
        }
        return r;
    }

    @Override
    public String toString() {
        return "HedgePicker{" + child + "}";
    }
}

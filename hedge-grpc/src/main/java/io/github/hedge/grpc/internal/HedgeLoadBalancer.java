package io.github.hedge.grpc.internal;

import io.grpc.ClientStreamTracer;
import io.grpc.ConnectivityState;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.LoadBalancerRegistry;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.util.ForwardingLoadBalancer;
import io.grpc.util.ForwardingLoadBalancerHelper;
import io.grpc.util.ForwardingSubchannel;
import java.util.List;
import java.util.Map;

/**
 * {@code hedge_round_robin}: forwards to a child policy through a helper that tags each subchannel
 * with its address (recorded at creation: {@code Subchannel.getAddresses()} may only be called in
 * the synchronization context) and wraps every picker the child publishes in a {@link HedgePicker}.
 * All methods run in grpc's synchronization context, as {@link LoadBalancer} requires.
 */
public final class HedgeLoadBalancer extends ForwardingLoadBalancer {
    private final Helper helper;
    private BalancerConfig config = BalancerConfig.DEFAULTS;
    private final BackendLatency latency = new BackendLatency(BalancerConfig.DEFAULTS);
    private LoadBalancer child;
    private String childName;

    public HedgeLoadBalancer(LoadBalancer.Helper helper) {
        this.helper = new Helper(helper);
    }

    @Override
    protected LoadBalancer delegate() {
        if (child == null) {
            switchChild(config);
        }
        return child;
    }

    @Override
    public Status acceptResolvedAddresses(ResolvedAddresses addresses) {
        Object cfg = addresses.getLoadBalancingPolicyConfig();
        config = cfg instanceof BalancerConfig ? (BalancerConfig) cfg : BalancerConfig.DEFAULTS;
        latency.configure(config);
        if (child == null || !config.childPolicy.equals(childName)) {
            switchChild(config);
        }
        LoadBalancerProvider p = LoadBalancerRegistry.getDefaultRegistry().getProvider(childName);
        Object childConfig = p.parseLoadBalancingPolicyConfig(Map.of()).getConfig();
        return child.acceptResolvedAddresses(
                addresses.toBuilder().setLoadBalancingPolicyConfig(childConfig).build());
    }

    @Override
    public void handleResolvedAddresses(ResolvedAddresses addresses) {
        acceptResolvedAddresses(addresses);
    }

    private void switchChild(BalancerConfig c) {
        if (child != null) {
            child.shutdown();
        }
        LoadBalancerProvider p = LoadBalancerRegistry.getDefaultRegistry().getProvider(c.childPolicy);
        if (p == null) {
            throw new IllegalStateException("hedge_round_robin: child policy " + c.childPolicy + " is not registered");
        }
        childName = c.childPolicy;
        child = p.newLoadBalancer(helper);
    }

    @Override
    public String toString() {
        return "HedgeLoadBalancer{" + config + "}";
    }

    private final class Helper extends ForwardingLoadBalancerHelper {
        private final LoadBalancer.Helper delegate;

        Helper(LoadBalancer.Helper delegate) {
            this.delegate = delegate;
        }

        @Override
        protected LoadBalancer.Helper delegate() {
            return delegate;
        }

        @Override
        public Subchannel createSubchannel(CreateSubchannelArgs args) {
            Subchannel s = super.createSubchannel(args);
            return new TrackedSubchannel(s, addressOf(args.getAddresses()), latency);
        }

        @Override
        public void updateBalancingState(ConnectivityState state, SubchannelPicker picker) {
            super.updateBalancingState(state, new HedgePicker(picker, latency));
        }
    }

    static String addressOf(List<EquivalentAddressGroup> groups) {
        if (groups.isEmpty() || groups.get(0).getAddresses().isEmpty()) {
            return null;
        }
        return Addresses.of(groups.get(0).getAddresses().get(0));
    }

    /** A subchannel that knows its backend and measures the streams placed on it. */
    static final class TrackedSubchannel extends ForwardingSubchannel {
        private final Subchannel delegate;
        volatile String address;
        final ClientStreamTracer.Factory tracerFactory;

        final BackendLatency latency;

        TrackedSubchannel(Subchannel delegate, String address, BackendLatency latency) {
            this.delegate = delegate;
            this.address = address;
            this.latency = latency;
            this.tracerFactory = new ClientStreamTracer.Factory() {
                @Override
                public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                    return new LatencyTracer(TrackedSubchannel.this);
                }
            };
        }

        @Override
        protected Subchannel delegate() {
            return delegate;
        }

        @Override
        public void updateAddresses(List<EquivalentAddressGroup> addrs) {
            address = addressOf(addrs);
            super.updateAddresses(addrs);
        }
    }

    /** Measures one stream: from its creation to its close. */
    static final class LatencyTracer extends ClientStreamTracer {
        private final TrackedSubchannel subchannel;
        private final BackendLatency latency;
        private final long start;

        LatencyTracer(TrackedSubchannel subchannel) {
            this.subchannel = subchannel;
            this.latency = subchannel.latency;
            this.start = latency.nanoTime();
        }

        @Override
        public void streamClosed(Status status) {
            String a = subchannel.address;
            if (a == null) {
                return;
            }
            Status.Code c = status.getCode();
            if (c == Status.Code.OK || c == Status.Code.CANCELLED || c == Status.Code.DEADLINE_EXCEEDED) {
                latency.record(a, start, latency.nanoTime());
            }
        }
    }
}

package io.github.hedge.grpc.internal;

import io.grpc.CallOptions;
import java.util.List;

/** What an attempt tells the balancer through its {@link CallOptions}. */
public final class Keys {
    /** Backends ({@link Addresses} form) the call's earlier attempts used: the picker avoids them. */
    public static final CallOptions.Key<List<String>> TRIED_TARGETS =
            CallOptions.Key.createWithDefault("io.github.hedge.tried-targets", List.of());

    private Keys() {}
}

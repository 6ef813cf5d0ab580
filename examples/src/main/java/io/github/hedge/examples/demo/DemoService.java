package io.github.hedge.examples.demo;

import io.grpc.EquivalentAddressGroup;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The wire pieces the demo needs without generated code: a unary method whose messages are raw bytes,
 * and a name resolver that hands a channel a fixed list of addresses (grpc-java has none built in).
 * Thread-safe.
 */
public final class DemoService {
    /** The embedded backends' method: idempotent, so hedge-grpc hedges it as a .proto-marked method. */
    public static final String METHOD = "hedge.demo.Demo/Get";

    private static final String SCHEME = "hedgedemo";
    private static final Map<String, List<SocketAddress>> TARGETS = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT_TARGET = new AtomicInteger();

    static {
        NameResolverRegistry.getDefaultRegistry().register(new StaticResolverProvider());
    }

    private DemoService() {}

    /**
     * @param fullMethodName "pkg.Service/Method"
     * @param idempotent whether hedging may send it more than once (as {@code idempotency_level} would)
     * @return a unary method descriptor whose request and response are raw bytes (an empty request is
     *     a valid protobuf message with every field at its default)
     */
    public static MethodDescriptor<byte[], byte[]> method(String fullMethodName, boolean idempotent) {
        return MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(fullMethodName)
                .setRequestMarshaller(BytesMarshaller.INSTANCE)
                .setResponseMarshaller(BytesMarshaller.INSTANCE)
                .setIdempotent(idempotent)
                .build();
    }

    /**
     * @param addresses the backends, in order
     * @return a channel target ("hedgedemo:///n") that resolves to exactly these addresses
     */
    public static String target(List<InetSocketAddress> addresses) {
        String name = "t" + NEXT_TARGET.incrementAndGet();
        TARGETS.put(name, List.copyOf(addresses));
        return SCHEME + ":///" + name;
    }

    private enum BytesMarshaller implements MethodDescriptor.Marshaller<byte[]> {
        INSTANCE;

        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static final class StaticResolverProvider extends NameResolverProvider {
        @Override
        protected boolean isAvailable() {
            return true;
        }

        @Override
        protected int priority() {
            return 5;
        }

        @Override
        public String getDefaultScheme() {
            return SCHEME;
        }

        @Override
        public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
            if (!SCHEME.equals(targetUri.getScheme())) {
                return null;
            }
            List<SocketAddress> addresses = TARGETS.get(targetUri.getPath().substring(1));
            if (addresses == null) {
                return null;
            }
            return new NameResolver() {
                @Override
                public String getServiceAuthority() {
                    return "hedge-demo";
                }

                @Override
                public void start(Listener2 listener) {
                    List<EquivalentAddressGroup> groups = new ArrayList<>();
                    for (SocketAddress a : addresses) {
                        groups.add(new EquivalentAddressGroup(a));
                    }
                    listener.onResult(ResolutionResult.newBuilder()
                            .setAddressesOrError(io.grpc.StatusOr.fromValue(groups))
                            .build());
                }

                @Override
                public void shutdown() {}
            };
        }
    }
}

package io.github.hedge.examples.spring;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The contract of the prices service, a gRPC service with one unary method, {@code shop.Prices/Get}:
 * a product id in, its price out, both as UTF-8 text. What protoc would generate from a .proto,
 * written out so the example needs no code generation. Immutable.
 */
public final class Prices {
    /** The method's full name, as in {@code hedge.grpc.methods[shop.Prices/Get].*}. */
    public static final String GET_NAME = "shop.Prices/Get";

    /** {@code shop.Prices/Get}: reads a price; safe to repeat, though the descriptor does not say so. */
    public static final MethodDescriptor<String, String> GET = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(GET_NAME)
            .setRequestMarshaller(Utf8.INSTANCE)
            .setResponseMarshaller(Utf8.INSTANCE)
            .build();

    private Prices() {}

    private enum Utf8 implements MethodDescriptor.Marshaller<String> {
        INSTANCE;

        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try (stream) {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}

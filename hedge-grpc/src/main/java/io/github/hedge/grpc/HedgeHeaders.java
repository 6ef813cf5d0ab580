package io.github.hedge.grpc;

import io.grpc.Metadata;

/**
 * The metadata the client interceptor adds to hedges, for servers that want to treat them apart
 * ({@link HedgeSheddingServerInterceptor} sheds them under load). Each hedge carries two headers:
 * hedge's own {@link #ATTEMPT} and the standard {@link #PREVIOUS_RPC_ATTEMPTS}, which grpc-java's
 * native retries and hedging send too, so servers and proxies that read it recognise hedges.
 *
 * <p>Only hedges carry the markers: the primary attempt is sent with the application's headers
 * unchanged. Stateless and thread-safe.
 */
public final class HedgeHeaders {
    /**
     * {@code hedge-attempt}: the attempt number of a hedge, as a decimal string ("2" for the first
     * hedge, "3" for the second, ...). Absent on primaries.
     */
    public static final Metadata.Key<String> ATTEMPT =
            Metadata.Key.of("hedge-attempt", Metadata.ASCII_STRING_MARSHALLER);

    /**
     * {@code grpc-previous-rpc-attempts}: the number of attempts of the call sent before this one,
     * as a decimal string ("1" on the first hedge, "2" on the second, ...), as grpc-java's native
     * hedging sends it (gRFC A6). Absent on primaries.
     */
    public static final Metadata.Key<String> PREVIOUS_RPC_ATTEMPTS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

    private HedgeHeaders() {}

    /**
     * @param headers request headers as a server sees them
     * @return the attempt number {@link #ATTEMPT} carries; without it, one more than {@link
     *     #PREVIOUS_RPC_ATTEMPTS} (a hedge or retry of another gRPC client); 1 when neither is
     *     present (a primary) or the value is not a number in range
     */
    public static int attemptNumber(Metadata headers) {
        int n = parse(headers.get(ATTEMPT), 1);
        if (n >= 1) {
            return n;
        }
        int previous = parse(headers.get(PREVIOUS_RPC_ATTEMPTS), 0);
        return previous >= 1 && previous < Integer.MAX_VALUE ? previous + 1 : 1;
    }

    /** @return the value as an int, or -1 when absent, unparseable or below {@code min} */
    private static int parse(String v, int min) {
        if (v == null) {
            return -1;
        }
        try {
            int n = Integer.parseInt(v.trim());
            return n >= min ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * @param headers request headers as a server sees them
     * @return whether the request is a hedge (attempt number &gt; 1), by either header
     */
    public static boolean isHedge(Metadata headers) {
        return attemptNumber(headers) > 1;
    }
}

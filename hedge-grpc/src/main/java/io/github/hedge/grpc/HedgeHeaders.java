package io.github.hedge.grpc;

import io.grpc.Metadata;

/**
 * The metadata the client interceptor adds to hedges, for servers that want to treat them apart
 * ({@link HedgeSheddingServerInterceptor} sheds them under load).
 *
 * <p>Only hedges carry the marker: the primary attempt is sent with the application's headers
 * unchanged. Stateless and thread-safe.
 */
public final class HedgeHeaders {
    /**
     * {@code hedge-attempt}: the attempt number of a hedge, as a decimal string ("2" for the first
     * hedge, "3" for the second, ...). Absent on primaries.
     */
    public static final Metadata.Key<String> ATTEMPT =
            Metadata.Key.of("hedge-attempt", Metadata.ASCII_STRING_MARSHALLER);

    private HedgeHeaders() {}

    /**
     * @param headers request headers as a server sees them
     * @return the attempt number the marker carries, or 1 when there is none (a primary) or it is
     *     not a positive number
     */
    public static int attemptNumber(Metadata headers) {
        String v = headers.get(ATTEMPT);
        if (v == null) {
            return 1;
        }
        try {
            int n = Integer.parseInt(v.trim());
            return n >= 1 ? n : 1;
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    /**
     * @param headers request headers as a server sees them
     * @return whether the request is a hedge (attempt number &gt; 1)
     */
    public static boolean isHedge(Metadata headers) {
        return attemptNumber(headers) > 1;
    }
}

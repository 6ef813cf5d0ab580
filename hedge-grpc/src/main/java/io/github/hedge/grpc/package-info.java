/**
 * Hedging for grpc-java: {@link io.github.hedge.grpc.HedgingClientInterceptor} hedges idempotent
 * unary calls and commits on the first successful response; {@link
 * io.github.hedge.grpc.HedgeLoadBalancerProvider} ({@code hedge_round_robin}) sends hedges to
 * backends a call has not tried and keeps primaries off a backend far slower than its peers; {@link
 * io.github.hedge.grpc.HedgeSheddingServerInterceptor} lets a server shed hedges under load; {@link
 * io.github.hedge.grpc.GrpcHedgeMetrics} publishes Micrometer meters tagged by method. See
 * docs/grpc.md.
 */
package io.github.hedge.grpc;

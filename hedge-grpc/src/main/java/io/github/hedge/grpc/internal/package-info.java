/**
 * Implementation of hedge-grpc: the hedging {@code ClientCall}, the balancer's picker and
 * per-backend latency. Not an API: nothing here appears in a public signature, and it may change
 * in any release.
 */
package io.github.hedge.grpc.internal;

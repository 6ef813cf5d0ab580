/** Copyable programs for hedge-grpc: the interceptor and the balancer with per-method settings. */
package io.github.hedge.examples.grpc;

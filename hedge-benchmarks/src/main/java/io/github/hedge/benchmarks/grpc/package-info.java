/**
 * The gRPC side-by-side benchmark: {@link io.github.hedge.benchmarks.grpc.GrpcHedgeBench} runs three
 * grpc-netty backends on 127.0.0.1 and compares no hedging, grpc-java's native {@code hedgingPolicy}
 * and hedge-grpc in a closed loop. Published in docs/grpc.md.
 */
package io.github.hedge.benchmarks.grpc;

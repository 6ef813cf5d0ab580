/**
 * The one-command demo: three embedded gRPC replicas on 127.0.0.1 (one of them slow now and then),
 * driven without hedging, with hedge-grpc and with grpc-java's native {@code hedgingPolicy}; a
 * side-by-side table on the console and an HTML report with Chart.js plots. With {@code --cassandra}
 * the same against a Cassandra cluster ({@link io.github.hedge.examples.demo.CassandraDemo}). Run {@link
 * io.github.hedge.examples.demo.HedgeDemo} with {@code --help} for the options.
 */
package io.github.hedge.examples.demo;

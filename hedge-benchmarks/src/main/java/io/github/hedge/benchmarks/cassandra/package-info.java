/**
 * Programs that measure hedge-cassandra against the driver's own speculative executions on a
 * simulated cluster (Simulacron, loopback): the seed scenario (one node 250 ms slower) and the
 * side-by-side comparison. Runnable mains, not tests; docs/cassandra.md has the commands.
 */
package io.github.hedge.benchmarks.cassandra;

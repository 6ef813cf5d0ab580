/**
 * Integration tests of hedge-cassandra against a real 3-node Apache Cassandra cluster started by
 * {@code scripts/cassandra-cluster}: node death, stalls, a slow link, exactly-once checks counted
 * at the nodes, server cost and resource hygiene. Each fault runs with and without hedging and with
 * the driver's constant speculative execution policy; the raw output lands in {@code
 * target/reliability/raw}, and the tables and plots, computed from it, in {@code target/reliability}.
 */
package io.github.hedge.cassandra.it;

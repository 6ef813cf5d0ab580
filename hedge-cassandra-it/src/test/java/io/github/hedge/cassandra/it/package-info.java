/**
 * Integration tests of hedge-cassandra against a real 3-node Apache Cassandra cluster started by
 * {@code scripts/cassandra-cluster}: node death, stalls, a slow link, exactly-once checks, server
 * cost and resource hygiene. Each fault runs with and without hedging and with the driver's
 * constant speculative execution policy; the tables and plots land in {@code target/reliability}.
 */
package io.github.hedge.cassandra.it;

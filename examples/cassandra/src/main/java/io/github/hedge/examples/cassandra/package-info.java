/**
 * Copyable programs for hedge-cassandra: {@link io.github.hedge.examples.cassandra.WrappedSessionExample}
 * (hedge drives the attempts) and {@link io.github.hedge.examples.cassandra.DriverConfigExample} (the
 * driver's speculative executions, with hedge's delay and budget, set up by configuration only).
 */
package io.github.hedge.examples.cassandra;

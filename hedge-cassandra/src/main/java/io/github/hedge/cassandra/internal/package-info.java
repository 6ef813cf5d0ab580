/**
 * Implementation details of hedge-cassandra: replica resolution, latency scores, the query plan
 * that charges the budget, idempotence inference. Not an API; may change in any release.
 */
package io.github.hedge.cassandra.internal;

/**
 * The slow-call log: {@link io.github.hedge.core.slowlog.SlowCallLog} writes, through SLF4J, every
 * hedged call slower than a threshold together with its per-attempt trace (target, start offset,
 * duration and outcome of each attempt), rate-limited so a bad minute cannot flood the log.
 * Request details that may carry user data are logged only when opted in.
 */
package io.github.hedge.core.slowlog;

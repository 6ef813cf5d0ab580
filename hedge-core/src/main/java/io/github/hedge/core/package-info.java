/**
 * Hedged requests, the core of hedge: send a backup copy of a slow call and keep the first success.
 * {@link io.github.hedge.core.HedgedExecutor} runs one logical call as up to N attempts: if an
 * attempt has not answered after a {@link io.github.hedge.core.DelayPolicy delay}, the next one
 * starts (budget permitting, see {@link io.github.hedge.core.HedgeBudget}); the first success wins
 * and the losers are cancelled.
 *
 * <p>The public surface: the executor and its {@link io.github.hedge.core.HedgeConfig}, per-call
 * {@link io.github.hedge.core.CallOptions}, the {@link io.github.hedge.core.AttemptContext} an
 * attempt sees, delay policies, the budget, the {@link io.github.hedge.core.LatencyTracker} that
 * feeds adaptive delays (and accepts latency recorded by adapters), the error classifier and the
 * registry of named executors. Durations are {@link java.time.Duration}s in configuration and
 * nanoseconds on hot paths. Every type here is thread-safe unless its Javadoc says otherwise
 * (builders are not).
 */
package io.github.hedge.core;

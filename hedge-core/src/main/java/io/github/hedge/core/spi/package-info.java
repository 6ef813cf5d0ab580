/**
 * What the executor is built on and what adapters and tests may replace: the
 * {@link io.github.hedge.core.spi.Ticker} (time), the {@link io.github.hedge.core.spi.HedgeScheduler}
 * (hedge timers and deadlines), the built-in {@link io.github.hedge.core.spi.Schedulers}, and the
 * {@link io.github.hedge.core.spi.CallDecorator} that instrumentation (tracing) wraps each call's
 * attempts with.
 */
package io.github.hedge.core.spi;

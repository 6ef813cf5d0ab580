/**
 * What the executor is built on and what adapters and tests may replace: the
 * {@link io.github.hedge.core.spi.Ticker} (time), the {@link io.github.hedge.core.spi.HedgeScheduler}
 * (hedge timers and deadlines) and the built-in {@link io.github.hedge.core.spi.Schedulers}.
 */
package io.github.hedge.core.spi;

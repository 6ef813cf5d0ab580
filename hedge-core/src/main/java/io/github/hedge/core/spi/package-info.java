/**
 * What the executor is built on and what adapters and tests may replace: the
 * {@link io.github.hedge.core.spi.Ticker} (time), the {@link io.github.hedge.core.spi.HedgeScheduler}
 * (hedge timers and deadlines), the built-in {@link io.github.hedge.core.spi.Schedulers}, and the
 * {@link io.github.hedge.core.spi.CallDecorator} that instrumentation (tracing) wraps each call's
 * attempts with. For adapters that place attempts on targets: {@link
 * io.github.hedge.core.spi.StallingTargets} finds the targets that stall a share of their calls,
 * and {@link io.github.hedge.core.spi.SetApart} is the rule for how many may be kept away from
 * first attempts at once.
 */
package io.github.hedge.core.spi;

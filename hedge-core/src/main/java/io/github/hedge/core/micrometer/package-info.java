/**
 * Micrometer meters for hedged calls: {@link io.github.hedge.core.micrometer.HedgeMetrics}, a
 * {@code MeterBinder} fed by an executor's events (or any adapter's) plus gauges of the executor's
 * current delay, budget and calls in flight.
 *
 * <p>Micrometer is an optional dependency of {@code hedge-core}: this is the only package that uses
 * it, so the rest of the core runs without it on the class path. Add {@code
 * io.micrometer:micrometer-core} to use this package.
 */
package io.github.hedge.core.micrometer;

/**
 * The tail simulator behind {@code hedge-sim.jar}: runs the real {@code HedgedExecutor} on a
 * {@code VirtualTimeScheduler} against simulated replicas ({@code tail}, {@code shift},
 * {@code closed-shift}, {@code load}, {@code sweep}, and {@code transient} for the first calls of a
 * fresh executor), renders the percentile plot ({@code plot}) and checks timers in real time
 * ({@code timers}). Deterministic for a given seed.
 */
package io.github.hedge.benchmarks.sim;

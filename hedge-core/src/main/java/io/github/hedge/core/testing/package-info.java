/**
 * Test support shipped with the core: {@link io.github.hedge.core.testing.VirtualTimeScheduler}
 * runs a real {@code HedgedExecutor} in virtual time, in the user's tests and in simulations.
 */
package io.github.hedge.core.testing;

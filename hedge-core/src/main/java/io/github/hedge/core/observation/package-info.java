/**
 * Micrometer Observation for hedged calls: one observation per call and one per attempt, its child,
 * so a trace shows a hedged request's attempts side by side with the winner marked. Needs {@code
 * io.micrometer:micrometer-observation} on the class path (an optional dependency of hedge-core).
 * Start with {@link io.github.hedge.core.observation.HedgeObservations}.
 */
package io.github.hedge.core.observation;

package io.github.hedge.core.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names an attempt's observation and its key values. Implement it to replace {@link
 * DefaultHedgeAttemptObservationConvention} ({@link HedgeObservations.Builder#attemptConvention}),
 * or register a {@code GlobalObservationConvention} for {@link HedgeAttemptObservationContext}.
 * Implementations must be thread-safe.
 */
public interface HedgeAttemptObservationConvention extends ObservationConvention<HedgeAttemptObservationContext> {
    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof HedgeAttemptObservationContext;
    }
}

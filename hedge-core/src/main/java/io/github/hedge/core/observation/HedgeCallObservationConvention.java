package io.github.hedge.core.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names a hedged call's observation and its key values. Implement it to replace {@link
 * DefaultHedgeCallObservationConvention} ({@link HedgeObservations.Builder#callConvention}), or
 * register a {@code GlobalObservationConvention} for {@link HedgeCallObservationContext}.
 * Implementations must be thread-safe.
 */
public interface HedgeCallObservationConvention extends ObservationConvention<HedgeCallObservationContext> {
    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof HedgeCallObservationContext;
    }
}

package io.github.hedge.core.observation;

import io.micrometer.common.KeyValues;
import java.util.Locale;

/**
 * The default names of a hedged call's observation, {@value HedgeObservations#CALL_NAME}. Every key
 * value is low-cardinality:
 *
 * <table>
 *   <caption>Key values of {@code hedge.call}</caption>
 *   <tr><th>key</th><th>values</th></tr>
 *   <tr><td>{@code hedge.executor}</td><td>the executor's name</td></tr>
 *   <tr><td>{@code hedge.operation}</td><td>the call's operation label, or {@code none}</td></tr>
 *   <tr><td>{@code hedge.outcome}</td><td>{@code success}, {@code failure}, {@code
 *       deadline-exceeded}, {@code cancelled}</td></tr>
 *   <tr><td>{@code hedge.attempts}</td><td>attempts started, {@code 1} to {@code 16}</td></tr>
 *   <tr><td>{@code hedge.winner}</td><td>the winning attempt's number, or {@code none}</td></tr>
 * </table>
 *
 * <p>The contextual name (a span's name) is the executor's name, followed by the operation when
 * set. Thread-safe (stateless).
 */
public class DefaultHedgeCallObservationConvention implements HedgeCallObservationConvention {
    /** The shared instance. */
    public static final DefaultHedgeCallObservationConvention INSTANCE = new DefaultHedgeCallObservationConvention();

    /** Creates the convention; {@link #INSTANCE} serves everyone. */
    public DefaultHedgeCallObservationConvention() {}

    @Override
    public String getName() {
        return HedgeObservations.CALL_NAME;
    }

    @Override
    public String getContextualName(HedgeCallObservationContext context) {
        return context.operation() == null
                ? context.executorName()
                : context.executorName() + " " + context.operation();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(HedgeCallObservationContext context) {
        KeyValues kv = KeyValues.of(
                "hedge.executor",
                context.executorName(),
                "hedge.operation",
                context.operation() == null ? "none" : context.operation());
        if (context.outcome() == null) {
            return kv;
        }
        return kv.and(
                "hedge.outcome",
                        context.outcome().name().toLowerCase(Locale.ROOT).replace('_', '-'),
                "hedge.attempts", Integer.toString(context.attemptsStarted()),
                "hedge.winner", context.winningAttempt() == 0 ? "none" : Integer.toString(context.winningAttempt()));
    }
}

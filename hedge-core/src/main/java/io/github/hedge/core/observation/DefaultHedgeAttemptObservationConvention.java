package io.github.hedge.core.observation;

import io.micrometer.common.KeyValues;
import java.util.Locale;

/**
 * The default names of an attempt's observation, {@value HedgeObservations#ATTEMPT_NAME}. Low-
 * cardinality key values:
 *
 * <table>
 *   <caption>Key values of {@code hedge.attempt}</caption>
 *   <tr><th>key</th><th>values</th></tr>
 *   <tr><td>{@code hedge.executor}</td><td>the executor's name</td></tr>
 *   <tr><td>{@code hedge.operation}</td><td>the call's operation label, or {@code none}</td></tr>
 *   <tr><td>{@code hedge.attempt}</td><td>{@code 1} for the primary, {@code 2} to {@code 16} for
 *       hedges</td></tr>
 *   <tr><td>{@code hedge.reason}</td><td>{@code primary}, {@code delay-elapsed}, {@code
 *       previous-failed}, {@code budget-deferred}, {@code unknown}</td></tr>
 *   <tr><td>{@code hedge.outcome}</td><td>see {@link HedgeAttemptObservationContext#outcomeName()}:
 *       {@code won}, {@code lost-cancelled}, {@code failed}, {@code left-running}, {@code
 *       not-started}, {@code succeeded-late}, {@code cancelled}</td></tr>
 *   <tr><td>{@code hedge.error}</td><td>the failed attempt's exception class (simple name), or
 *       {@code none}; never its message</td></tr>
 * </table>
 *
 * <p>One high-cardinality key value, {@code hedge.target} (the target the adapter reported, such as
 * {@code 10.0.0.3:9042}), is added only when {@link HedgeObservations.Builder#includeTargets} is set.
 * The contextual name is the call's, followed by {@code attempt <n>}. Thread-safe (stateless).
 */
public class DefaultHedgeAttemptObservationConvention implements HedgeAttemptObservationConvention {
    /** The shared instance. */
    public static final DefaultHedgeAttemptObservationConvention INSTANCE =
            new DefaultHedgeAttemptObservationConvention();

    /** Creates the convention; {@link #INSTANCE} serves everyone. */
    public DefaultHedgeAttemptObservationConvention() {}

    @Override
    public String getName() {
        return HedgeObservations.ATTEMPT_NAME;
    }

    @Override
    public String getContextualName(HedgeAttemptObservationContext context) {
        String call = context.operation() == null
                ? context.executorName()
                : context.executorName() + " " + context.operation();
        return call + " attempt " + context.attemptNumber();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(HedgeAttemptObservationContext context) {
        String reason = context.reason() != null
                ? context.reason().name().toLowerCase(Locale.ROOT).replace('_', '-')
                : context.attemptNumber() == 1 ? "primary" : "unknown";
        KeyValues kv = KeyValues.of(
                "hedge.executor",
                context.executorName(),
                "hedge.operation",
                context.operation() == null ? "none" : context.operation(),
                "hedge.attempt",
                Integer.toString(context.attemptNumber()),
                "hedge.reason",
                reason);
        if (context.record() == null && context.started()) {
            return kv;
        }
        String errorType = context.record() == null ? null : context.record().errorType();
        return kv.and(
                "hedge.outcome",
                context.outcomeName(),
                "hedge.error",
                errorType == null ? "none" : simpleName(errorType));
    }

    private static String simpleName(String className) {
        return className.substring(Math.max(className.lastIndexOf('.'), className.lastIndexOf('$')) + 1);
    }
}

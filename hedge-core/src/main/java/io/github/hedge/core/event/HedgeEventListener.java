package io.github.hedge.core.event;

import java.util.Set;

/**
 * Receives an executor's hedge events, to log, count or trace its calls; register it with {@link
 * HedgeEvents#subscribe(HedgeEventListener)}. Called on the thread where the event happened (a caller, a scheduler
 * or an attempt's completion thread), so it must be fast, non-blocking and thread-safe. An
 * exception it throws is caught and never breaks the call.
 *
 * <p><b>Declaring what it needs.</b> A producer builds an event only when some listener takes it,
 * so a listener that declares less costs the calls less:
 *
 * <ul>
 *   <li>{@link #eventTypes()} names the event types it receives (every type by default). A call
 *       builds no {@link AttemptStarted} when no listener takes that type, say.
 *   <li>{@link #wantsCallCompleted(CallCompleted.CallOutcome, long)} is asked, with the call's
 *       outcome and duration, before the {@link CallCompleted} event and its per-attempt trace are
 *       built; when every listener of that type says no, nothing is built. The slow-call log
 *       answers "only when the call is slow", so calls under its threshold cost one comparison.
 * </ul>
 *
 * <pre>{@code
 * HedgeEventListener failures = new HedgeEventListener() {
 *     public Set<Class<? extends HedgeEvent>> eventTypes() { return Set.of(CallCompleted.class); }
 *     public boolean wantsCallCompleted(CallCompleted.CallOutcome outcome, long totalNanos) {
 *         return outcome != CallCompleted.CallOutcome.SUCCESS;
 *     }
 *     public void onEvent(HedgeEvent event) { ... } // only failed calls arrive here
 * };
 * }</pre>
 */
@FunctionalInterface
public interface HedgeEventListener {
    /** Every event type: what {@link #eventTypes()} returns unless overridden. */
    Set<Class<? extends HedgeEvent>> ALL_EVENT_TYPES = Set.of(HedgeEvent.class);

    /** @param event the event */
    void onEvent(HedgeEvent event);

    /**
     * The event types this listener receives; {@link HedgeEvent HedgeEvent.class} stands for
     * every type. Read once, when the listener subscribes: {@link HedgeEvents} never calls {@link
     * #onEvent} with another type, and producers skip building events of types no listener takes.
     *
     * @return a non-empty set of event types; {@link #ALL_EVENT_TYPES} by default
     */
    default Set<Class<? extends HedgeEvent>> eventTypes() {
        return ALL_EVENT_TYPES;
    }

    /**
     * Whether this listener wants the {@link CallCompleted} event of a call that ended with {@code
     * outcome} after {@code totalNanos}; asked only if {@link #eventTypes()} includes {@code
     * CallCompleted}. A producer asks before it builds the event (and its per-attempt trace), and
     * {@link HedgeEvents#publish} asks again before delivering it, so {@link #onEvent} gets only
     * the calls this returned {@code true} for. It must be cheap, non-blocking, thread-safe and
     * free of side effects (it may be asked more than once per call); one that throws counts as
     * {@code true}, and its exception is handled as one thrown by {@link #onEvent}.
     *
     * @param outcome how the call ended
     * @param totalNanos from the call's start to its end, in nanoseconds
     * @return {@code true} (the default) to receive the event
     */
    default boolean wantsCallCompleted(CallCompleted.CallOutcome outcome, long totalNanos) {
        return true;
    }
}

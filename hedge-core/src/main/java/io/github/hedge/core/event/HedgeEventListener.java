package io.github.hedge.core.event;

/**
 * Receives hedge events. Called on the thread where the event happened (a caller, a scheduler
 * or an attempt's completion thread), so it must be fast, non-blocking and thread-safe. An
 * exception it throws is caught and never breaks the call.
 */
@FunctionalInterface
public interface HedgeEventListener {
    /** @param event the event */
    void onEvent(HedgeEvent event);
}

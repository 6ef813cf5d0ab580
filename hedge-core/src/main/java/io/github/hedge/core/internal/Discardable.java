package io.github.hedge.core.internal;

/**
 * Told when the task it belongs to will never run: a built-in scheduler closed while the task was
 * pending. The timer queue uses it so that calls waiting on a timer of a closed scheduler are
 * settled instead of waiting forever. Internal; implementations must be thread-safe and must not
 * throw (what they throw is logged and ignored).
 */
@FunctionalInterface
interface Discardable {
    /** The task was dropped without running. Called at most once, on the thread that closed the scheduler. */
    void discarded();
}

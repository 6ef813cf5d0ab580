package io.github.hedge.core;

import io.github.hedge.core.event.NotHedged;
import java.time.Duration;
import java.util.List;

/**
 * One attempt of a hedged call, as the attempt function sees it. Adapters use it to steer the
 * attempt (pick a target not yet tried), to report where it landed, to hook cancellation into
 * the real work, and to relay server pushback.
 *
 * <p>Thread-safe: it may be used from the thread that started the attempt and from the attempt's
 * completion thread.
 */
public interface AttemptContext {
    /** @return 1 for the primary, 2.. for hedges */
    int attemptNumber();

    /**
     * @return the call's id, as in its {@link io.github.hedge.core.event.HedgeEvent#callId()
     *     events}, so instrumentation can match an attempt with them; 0 when unknown (a context not
     *     made by an executor)
     */
    default long callId() {
        return 0;
    }

    /** @return whether this attempt is a hedge (not the primary) */
    default boolean isHedge() {
        return attemptNumber() > 1;
    }

    /**
     * @return targets the call's earlier attempts reported, in start order (a snapshot; excludes
     *     this attempt), so a load balancer can pick a different replica
     */
    List<String> triedTargets();

    /**
     * Reports the target this attempt runs on ("10.0.0.3:9042"). May be called after the fact, once
     * the transport has picked it. Latency is then recorded for that target, events and the
     * slow-call log show it, and later attempts see it in {@link #triedTargets()}.
     *
     * @param target the target; a low-cardinality identifier, never user data
     */
    void reportTarget(String target);

    /**
     * Registers work to run when this attempt is cancelled: it lost to another attempt, the caller
     * cancelled, or the deadline passed. Runs at once if the attempt is already cancelled. A hook
     * that throws is ignored. Besides hooks, the executor cancels the future the attempt returned.
     *
     * @param hook what cancels the real work ({@code ClientCall::cancel}, say)
     */
    void onCancel(Runnable hook);

    /** @return whether this attempt has been cancelled */
    boolean isCancelled();

    /**
     * Relays server pushback: wait at least {@code delay} before this call's next attempt.
     *
     * @param delay the least delay before the next attempt; >= 0
     */
    void pushback(Duration delay);

    /** Relays server pushback that forbids further attempts of this call. */
    void stopFurtherAttempts();

    /**
     * Forbids further attempts of this call, for a reason the adapter knows: {@link
     * NotHedged.Reason#REQUEST_TOO_LARGE} when the request cannot be sent again (its body was over the
     * adapter's buffer limit), {@link NotHedged.Reason#NO_UNTRIED_TARGET} when every target the call
     * could go to has been tried, {@link NotHedged.Reason#CLIENT_CLOSING} when the adapter's client is
     * closing, {@link NotHedged.Reason#PUSHBACK} as {@link #stopFurtherAttempts()}. The call's {@link
     * NotHedged} event carries {@code reason}. The default ignores the reason.
     *
     * @param reason why: one of the four above
     * @throws IllegalArgumentException for another reason, or null
     */
    default void stopFurtherAttempts(NotHedged.Reason reason) {
        io.github.hedge.core.internal.Checks.adapterStopReason(reason);
        stopFurtherAttempts();
    }
}

package io.github.hedge.reactor.internal;

import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The values of one call's attempts that never reach its subscriber: a loser's late success, or
 * every value when the subscriber cancelled first. Each is handed to Reactor's discard hook ({@code
 * Operators.onDiscard}), as Reactor's own operators do with values they drop, so pooled buffers
 * are released. Not part of the public API.
 *
 * <p>Thread-safe: attempts complete, and the call settles, on any thread.
 *
 * @param <T> the value type
 */
public final class LoserValues<T> {
    private final Context context;
    private List<T> pending = new ArrayList<>(2);
    private boolean settled;
    private Object winner;

    /** @param context the subscriber's context, where the discard hook is found */
    public LoserValues(Context context) {
        this.context = context;
    }

    /** @param value an attempt's value ({@code null}: it completed empty) */
    public void produced(T value) {
        if (value == null) {
            return;
        }
        synchronized (this) {
            if (!settled) {
                pending.add(value);
                return;
            }
        }
        discardUnlessWinner(value);
    }

    /** @param winnerValue the value the call delivered, or {@code null} if it delivered none */
    public void settled(T winnerValue) {
        List<T> produced;
        synchronized (this) {
            settled = true;
            winner = winnerValue;
            produced = pending;
            pending = null;
        }
        for (T value : produced) {
            discardUnlessWinner(value);
        }
    }

    private void discardUnlessWinner(T value) {
        if (value != winner) {
            Operators.onDiscard(value, context);
        }
    }
}

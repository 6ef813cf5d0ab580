package io.github.hedge.http.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The responses one call's attempts produced, so that every one the caller does not get is closed:
 * losers' late responses, failed attempts' responses the call did not return. Thread-safe.
 *
 * @param <R> the response type
 */
public final class Produced<R> {
    private final Consumer<R> close;
    private List<R> open = new ArrayList<>();

    /** @param close closes a response nobody will read; must not throw */
    public Produced(Consumer<R> close) {
        this.close = close;
    }

    /**
     * An attempt produced a response; closed at once if the call has already settled.
     *
     * @param response the response
     */
    public void add(R response) {
        synchronized (this) {
            if (open != null) {
                open.add(response);
                return;
            }
        }
        closeQuietly(response);
    }

    /**
     * The call settled; closes every response but the one the caller gets.
     *
     * @param kept the response the caller gets, or null
     */
    public void settle(R kept) {
        List<R> toClose;
        synchronized (this) {
            if (open == null) {
                return;
            }
            toClose = open;
            open = null;
        }
        for (R r : toClose) {
            if (r != kept) {
                closeQuietly(r);
            }
        }
    }

    private void closeQuietly(R r) {
        try {
            close.accept(r);
        } catch (RuntimeException e) {
            // closing a response nobody reads; nothing to tell the caller
        }
    }
}

package io.github.hedge.core.event;

import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event stream of one executor (or adapter): listeners subscribe and get a
 * {@link Subscription} to leave; producers {@link #publish} events. A listener that throws is
 * logged (rate-limited to the first failure per listener) and never breaks the call.
 *
 * <p>Each listener receives only the event types it subscribed to ({@link
 * HedgeEventListener#eventTypes()}, or the type given to {@link #subscribe(Class, Consumer)}), and
 * only the {@link CallCompleted} events its {@link HedgeEventListener#wantsCallCompleted} accepts.
 * Producers ask {@link #hasListeners(Class)} before building an event of a type, and {@link
 * #wantsCallCompleted} before building a {@code CallCompleted}, so an event nobody takes is never
 * built.
 *
 * <p>Thread-safe. Asking whether an event type has listeners costs one volatile read; subscribing
 * and unsubscribing copy the listener list (copy-on-write).
 */
public final class HedgeEvents {
    private static final Logger LOG = LoggerFactory.getLogger(HedgeEvents.class);

    private static final int ATTEMPT_STARTED = 1;
    private static final int HEDGE_SENT = 1 << 1;
    private static final int HEDGE_WON = 1 << 2;
    private static final int BUDGET_EXHAUSTED = 1 << 3;
    private static final int NOT_HEDGED = 1 << 4;
    private static final int CALL_COMPLETED = 1 << 5;
    private static final int ALL = (1 << 6) - 1;

    private static final Listeners NONE = new Listeners(new Entry[0]);

    private final Object lock = new Object();
    /** Replaced, never mutated; written under {@link #lock}. */
    private volatile Listeners listeners = NONE;

    /** Creates an event stream with no listener. */
    public HedgeEvents() {}

    /**
     * Subscribes a listener to the event types it declares ({@link HedgeEventListener#eventTypes()},
     * every type unless it overrides that method).
     *
     * @param listener the listener
     * @return a handle whose {@code close()} unsubscribes
     * @throws IllegalArgumentException if its {@code eventTypes()} is null or empty
     */
    public Subscription subscribe(HedgeEventListener listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        Set<Class<? extends HedgeEvent>> types = listener.eventTypes();
        if (types == null || types.isEmpty()) {
            throw new IllegalArgumentException(
                    "eventTypes of listener " + listener.getClass().getName() + " must not be empty, was " + types);
        }
        int mask = 0;
        for (Class<? extends HedgeEvent> type : types) {
            mask |= maskOf(Objects.requireNonNull(type, "eventTypes must not contain null"));
        }
        return add(new Entry(listener, mask));
    }

    /**
     * Subscribes a listener to one event type; events of other types are never built for it.
     *
     * @param type the event type, e.g. {@code HedgeWon.class}
     * @param listener the listener
     * @param <E> the event type
     * @return a handle whose {@code close()} unsubscribes
     */
    public <E extends HedgeEvent> Subscription subscribe(Class<E> type, Consumer<? super E> listener) {
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(listener, "listener must not be null");
        return add(new Entry(event -> listener.accept(type.cast(event)), maskOf(type)));
    }

    private Subscription add(Entry entry) {
        synchronized (lock) {
            Entry[] old = listeners.entries;
            Entry[] now = Arrays.copyOf(old, old.length + 1);
            now[old.length] = entry;
            listeners = new Listeners(now);
        }
        return () -> remove(entry);
    }

    private void remove(Entry entry) {
        synchronized (lock) {
            Entry[] old = listeners.entries;
            for (int i = 0; i < old.length; i++) {
                if (old[i] == entry) {
                    Entry[] now = new Entry[old.length - 1];
                    System.arraycopy(old, 0, now, 0, i);
                    System.arraycopy(old, i + 1, now, i, old.length - i - 1);
                    listeners = now.length == 0 ? NONE : new Listeners(now);
                    return;
                }
            }
        }
    }

    /** @return whether anyone listens, to any event type */
    public boolean hasListeners() {
        return listeners.entries.length > 0;
    }

    /**
     * @param type an event type, e.g. {@code HedgeSent.class}; {@code HedgeEvent.class} asks for
     *     any type
     * @return whether a listener takes events of this type; producers skip building them when not
     */
    public boolean hasListeners(Class<? extends HedgeEvent> type) {
        return (listeners.mask & maskOf(type)) != 0;
    }

    /**
     * Whether a listener wants the {@link CallCompleted} event of a call that ended with {@code
     * outcome} after {@code totalNanos} (see {@link HedgeEventListener#wantsCallCompleted}): a
     * producer asks before it builds the event and its per-attempt trace.
     *
     * @param outcome how the call ended
     * @param totalNanos from the call's start to its end, in nanoseconds
     * @return whether to build and {@link #publish} the event
     */
    public boolean wantsCallCompleted(CallCompleted.CallOutcome outcome, long totalNanos) {
        Listeners l = listeners;
        if ((l.mask & CALL_COMPLETED) == 0) {
            return false;
        }
        for (Entry entry : l.entries) {
            if (entry.wants(CALL_COMPLETED)) {
                try {
                    if (entry.listener.wantsCallCompleted(outcome, totalNanos)) {
                        return true;
                    }
                } catch (Throwable t) { // NOPMD: user code; publish() asks again and logs it
                    return true;
                }
            }
        }
        return false;
    }

    /** @return the number of listeners subscribed now */
    public int listenerCount() {
        return listeners.entries.length;
    }

    /**
     * Delivers an event to every listener that takes it, in subscription order, on the calling
     * thread.
     *
     * @param event the event
     */
    public void publish(HedgeEvent event) {
        Listeners l = listeners;
        int type = maskOf(event.getClass());
        if ((l.mask & type) == 0) {
            return;
        }
        for (Entry entry : l.entries) {
            if (!entry.wants(type)) {
                continue;
            }
            try {
                if (type == CALL_COMPLETED && !wanted(entry.listener, (CallCompleted) event)) {
                    continue;
                }
                entry.listener.onEvent(event);
            } catch (Throwable t) {
                if (!entry.failedOnce) {
                    entry.failedOnce = true;
                    LOG.warn(
                            "hedge event listener {} threw {}; the call goes on (further failures of this listener are not logged)",
                            entry.listener.getClass().getName(),
                            t.getClass().getName(),
                            t);
                }
            }
        }
    }

    private static boolean wanted(HedgeEventListener listener, CallCompleted call) {
        return listener.wantsCallCompleted(call.outcome(), call.totalNanos());
    }

    /** The bit of an event type; HedgeEvent is sealed, so these are all of them. */
    private static int maskOf(Class<?> type) {
        if (type == CallCompleted.class) {
            return CALL_COMPLETED;
        } else if (type == AttemptStarted.class) {
            return ATTEMPT_STARTED;
        } else if (type == HedgeSent.class) {
            return HEDGE_SENT;
        } else if (type == HedgeWon.class) {
            return HEDGE_WON;
        } else if (type == NotHedged.class) {
            return NOT_HEDGED;
        } else if (type == BudgetExhausted.class) {
            return BUDGET_EXHAUSTED;
        } else if (type == HedgeEvent.class) {
            return ALL;
        }
        throw new IllegalArgumentException("not a hedge event type: " + type.getName());
    }

    /** An immutable snapshot of the listeners and the union of the types they take. */
    private static final class Listeners {
        final Entry[] entries;
        final int mask;

        Listeners(Entry[] entries) {
            this.entries = entries;
            int m = 0;
            for (Entry e : entries) {
                m |= e.mask;
            }
            this.mask = m;
        }
    }

    private static final class Entry {
        final HedgeEventListener listener;
        final int mask;
        volatile boolean failedOnce;

        Entry(HedgeEventListener listener, int mask) {
            this.listener = listener;
            this.mask = mask;
        }

        boolean wants(int type) {
            return (mask & type) != 0;
        }
    }
}

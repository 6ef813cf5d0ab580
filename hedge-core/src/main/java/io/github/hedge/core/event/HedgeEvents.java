package io.github.hedge.core.event;

import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event stream of one executor (or adapter): listeners subscribe and get a
 * {@link Subscription} to leave; producers {@link #publish} events. A listener that throws is
 * logged (rate-limited to the first failure per listener) and never breaks the call.
 *
 * <p>Thread-safe. Publishing with no listener costs one volatile read; producers check
 * {@link #hasListeners()} before building an event.
 */
public final class HedgeEvents {
    private static final Logger LOG = LoggerFactory.getLogger(HedgeEvents.class);

    private final CopyOnWriteArrayList<Entry> listeners = new CopyOnWriteArrayList<>();

    /** Creates an event stream with no listener. */
    public HedgeEvents() {}

    /**
     * Subscribes a listener to every event.
     *
     * @param listener the listener
     * @return a handle whose {@code close()} unsubscribes
     */
    public Subscription subscribe(HedgeEventListener listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        Entry entry = new Entry(listener);
        listeners.add(entry);
        return () -> listeners.remove(entry);
    }

    /**
     * Subscribes a listener to one event type.
     *
     * @param type the event type, e.g. {@code HedgeWon.class}
     * @param listener the listener
     * @param <E> the event type
     * @return a handle whose {@code close()} unsubscribes
     */
    public <E extends HedgeEvent> Subscription subscribe(Class<E> type, Consumer<? super E> listener) {
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(listener, "listener must not be null");
        return subscribe(event -> {
            if (type.isInstance(event)) {
                listener.accept(type.cast(event));
            }
        });
    }

    /** @return whether anyone listens; producers skip building events when not */
    public boolean hasListeners() {
        return !listeners.isEmpty();
    }

    /** @return the number of listeners subscribed now */
    public int listenerCount() {
        return listeners.size();
    }

    /**
     * Delivers an event to every listener, in subscription order, on the calling thread.
     *
     * @param event the event
     */
    public void publish(HedgeEvent event) {
        for (Entry entry : listeners) {
            try {
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

    private static final class Entry {
        final HedgeEventListener listener;
        volatile boolean failedOnce;

        Entry(HedgeEventListener listener) {
            this.listener = listener;
        }
    }
}

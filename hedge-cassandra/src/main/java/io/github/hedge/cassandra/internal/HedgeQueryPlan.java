package io.github.hedge.cassandra.internal;

import com.datastax.oss.driver.api.core.metadata.Node;
import java.util.AbstractQueue;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A query plan that knows when an execution really goes out. The driver polls a request's plan
 * for its first execution (on the caller's or an I/O thread), for a speculative execution (on its
 * timer thread, when the delay elapsed and the request is still running) and for retries on the
 * next node (on an I/O thread). A poll on the timer thread asks the budget before handing out its
 * node; when it is denied the poll returns {@code null}, which ends that speculative execution
 * only (the driver keeps waiting for the executions already running), and the node is kept for
 * the next poll. Nothing here throws into the driver.
 *
 * <p>Thread-safe: polled from several threads; the delegate plans of the driver are thread-safe.
 */
public final class HedgeQueryPlan extends AbstractQueue<Node> {
    /** Called back when the plan's executions go out. */
    public interface Listener {
        /**
         * The first execution took its node.
         *
         * @param node the node
         */
        void onPrimary(Node node);

        /**
         * A speculative execution is about to take a node.
         *
         * @param attemptNumber 2 for the first speculative execution
         * @param primary the first execution's node, or null
         * @param sincePrimaryNanos time since the first execution took its node
         * @return whether it may go out
         */
        boolean onSpeculative(int attemptNumber, Node primary, long sincePrimaryNanos);
    }

    private final Queue<Node> delegate;
    private final Listener listener;
    private final String timerThreadPrefix;
    private final AtomicInteger polls = new AtomicInteger();
    private final AtomicInteger speculative = new AtomicInteger(1);
    private final AtomicReference<Node> returned = new AtomicReference<>();
    private volatile Node primary;
    private volatile long primaryNanos;

    /**
     * @param delegate the wrapped policy's plan
     * @param listener told when executions go out
     * @param timerThreadPrefix the name prefix of the driver's timer thread ({@code <session>-timer-})
     */
    public HedgeQueryPlan(Queue<Node> delegate, Listener listener, String timerThreadPrefix) {
        this.delegate = delegate;
        this.listener = listener;
        this.timerThreadPrefix = timerThreadPrefix;
    }

    @Override
    public Node poll() {
        if (polls.getAndIncrement() == 0) {
            Node n = next();
            if (n != null) {
                primary = n;
                primaryNanos = System.nanoTime();
                try {
                    listener.onPrimary(n);
                } catch (RuntimeException e) {
                    // never fail the driver's request because of bookkeeping
                }
            }
            return n;
        }
        Node n = next();
        if (n != null && Thread.currentThread().getName().startsWith(timerThreadPrefix)) {
            boolean go;
            try {
                long since = primary == null ? 0 : System.nanoTime() - primaryNanos;
                go = listener.onSpeculative(speculative.incrementAndGet(), primary, since);
            } catch (RuntimeException e) {
                go = true; // as without hedge
            }
            if (!go) {
                // not charged, not sent: keep the node for a later retry of the running executions
                returned.set(n);
                return null;
            }
        }
        return n;
    }

    private Node next() {
        Node n = returned.getAndSet(null);
        return n != null ? n : delegate.poll();
    }

    @Override
    public Node peek() {
        Node n = returned.get();
        return n != null ? n : delegate.peek(); // the driver's own plans do not support peek
    }

    @Override
    public boolean offer(Node node) {
        return delegate.offer(node);
    }

    @Override
    public Iterator<Node> iterator() {
        return delegate.iterator();
    }

    @Override
    public int size() {
        return delegate.size();
    }
}

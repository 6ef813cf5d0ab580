package io.github.hedge.cassandra.internal;

import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.DriverExecutionException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.ColumnDefinitions;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/**
 * A synchronous {@link ResultSet} over an {@link AsyncResultSet}: further pages are fetched, when
 * iteration reaches them, with {@link AsyncResultSet#fetchNextPage()} and waited for. Like the
 * driver's own result sets, not thread-safe.
 */
public final class BlockingResultSet implements ResultSet {
    private AsyncResultSet current;
    private final List<ExecutionInfo> infos = new ArrayList<>(1);
    private final Iterator<Row> iterator = new Iterator<>() {
        @Override
        public boolean hasNext() {
            while (current.remaining() == 0 && current.hasMorePages()) {
                current = await(current.fetchNextPage());
                infos.add(current.getExecutionInfo());
            }
            return current.remaining() > 0;
        }

        @Override
        public Row next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return current.one();
        }
    };

    /** @param first the first page */
    public BlockingResultSet(AsyncResultSet first) {
        this.current = first;
        this.infos.add(first.getExecutionInfo());
    }

    @Override
    public ColumnDefinitions getColumnDefinitions() {
        return current.getColumnDefinitions();
    }

    @Override
    public List<ExecutionInfo> getExecutionInfos() {
        return List.copyOf(infos);
    }

    @Override
    public boolean isFullyFetched() {
        return !current.hasMorePages();
    }

    @Override
    public int getAvailableWithoutFetching() {
        return current.remaining();
    }

    @Override
    public boolean wasApplied() {
        return current.wasApplied();
    }

    @Override
    public Iterator<Row> iterator() {
        return iterator;
    }

    /**
     * Waits for a stage without being interruptible (as the driver's synchronous calls do; the
     * interrupt flag is restored) and rethrows its failure as the driver would.
     *
     * @param stage the stage
     * @param <T> its type
     * @return its value
     */
    public static <T> T await(CompletionStage<T> stage) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return stage.toCompletableFuture().get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof DriverException) {
                        // a copy carries this thread's stack trace, as the driver's sync calls do
                        throw ((DriverException) cause).copy();
                    }
                    if (cause instanceof RuntimeException) {
                        throw (RuntimeException) cause;
                    }
                    if (cause instanceof Error) {
                        throw (Error) cause;
                    }
                    throw new DriverExecutionException(cause);
                } catch (CancellationException e) {
                    throw e;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

package io.github.hedge.cassandra.internal;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.ColumnDefinitions;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.session.Request;
import com.datastax.oss.driver.api.core.session.Session;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * A page of a hedged statement's result. The attempt that answered was pinned to one node, and the
 * driver fetches later pages with the same statement, so from that node only; when that node cannot
 * take the request (it went down between pages, or the driver's retry policy asked for another
 * node), the page is fetched again through the driver's query plan, as an unhedged driver session
 * would. Not thread-safe, like the driver's result sets.
 */
public final class FailoverPages implements AsyncResultSet {
    private final AsyncResultSet page;
    private final Session session;

    /**
     * @param page a page of the result
     * @param session the driver session that runs the fallback requests
     */
    public FailoverPages(AsyncResultSet page, Session session) {
        this.page = page;
        this.session = session;
    }

    @Override
    public CompletionStage<AsyncResultSet> fetchNextPage() throws IllegalStateException {
        ExecutionInfo info = page.getExecutionInfo();
        ByteBuffer pagingState = info.getPagingState();
        Request request = info.getRequest();
        CompletionStage<AsyncResultSet> pinned = page.fetchNextPage(); // throws when there is no next page
        CompletableFuture<AsyncResultSet> next = new CompletableFuture<>();
        pinned.whenComplete((rs, error) -> {
            Throwable e = error == null ? null : unwrap(error);
            if (e == null) {
                next.complete(new FailoverPages(rs, session));
            } else if (e instanceof AllNodesFailedException
                    && request instanceof Statement
                    && ((Statement<?>) request).getNode() != null
                    && pagingState != null) {
                // the pinned node could not serve it: any coordinator can resume from the paging state
                Statement<?> unpinned =
                        ((Statement<?>) request).copy(pagingState).setNode(null);
                session.execute(unpinned, Statement.ASYNC).whenComplete((rs2, error2) -> {
                    if (error2 == null) {
                        next.complete(new FailoverPages(rs2, session));
                    } else {
                        next.completeExceptionally(unwrap(error2));
                    }
                });
            } else {
                next.completeExceptionally(e);
            }
        });
        return next;
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    @Override
    public ColumnDefinitions getColumnDefinitions() {
        return page.getColumnDefinitions();
    }

    @Override
    public ExecutionInfo getExecutionInfo() {
        return page.getExecutionInfo();
    }

    @Override
    public int remaining() {
        return page.remaining();
    }

    @Override
    public Iterable<Row> currentPage() {
        return page.currentPage();
    }

    @Override
    public Row one() {
        return page.one();
    }

    @Override
    public boolean hasMorePages() {
        return page.hasMorePages();
    }

    @Override
    public boolean wasApplied() {
        return page.wasApplied();
    }
}

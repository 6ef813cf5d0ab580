package io.github.hedge.cassandra.internal;

import com.datastax.dse.driver.api.core.cql.reactive.ReactiveResultSet;
import com.datastax.dse.driver.api.core.cql.reactive.ReactiveRow;
import com.datastax.dse.driver.internal.core.cql.reactive.DefaultReactiveResultSet;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.ColumnDefinitions;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The reactive result of a hedged statement: the driver's own {@code DefaultReactiveResultSet}
 * (rows, paging with back-pressure, column definitions, execution infos, {@code wasApplied}), whose
 * first page comes from a hedged call started when the rows are subscribed; later pages are fetched
 * as {@code executeAsync}'s are. Cancelling the rows' subscription also cancels the hedged call, so
 * no hedge starts afterwards (the driver's own cancellation only stops delivering rows). Not part of
 * the public API.
 *
 * <p>Thread-safe, like the driver's: rows may be subscribed once.
 */
public final class HedgedReactiveResultSet implements ReactiveResultSet {
    private final AtomicReference<CompletionStage<AsyncResultSet>> call = new AtomicReference<>();
    private final ReactiveResultSet rows;

    /** @param firstPage starts the hedged call of the first page; called once, on subscription */
    public HedgedReactiveResultSet(Supplier<CompletionStage<AsyncResultSet>> firstPage) {
        this.rows = new DefaultReactiveResultSet(() -> {
            CompletionStage<AsyncResultSet> stage = firstPage.get();
            call.set(stage);
            return stage;
        });
    }

    @Override
    public void subscribe(Subscriber<? super ReactiveRow> subscriber) {
        rows.subscribe(new Subscriber<ReactiveRow>() {
            @Override
            public void onSubscribe(Subscription s) {
                subscriber.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                        s.request(n);
                    }

                    @Override
                    public void cancel() {
                        s.cancel();
                        CompletionStage<AsyncResultSet> stage = call.get();
                        if (stage instanceof Future<?> f) {
                            f.cancel(true); // the hedged call: its attempts are cancelled, no hedge starts
                        }
                    }
                });
            }

            @Override
            public void onNext(ReactiveRow row) {
                subscriber.onNext(row);
            }

            @Override
            public void onError(Throwable t) {
                subscriber.onError(t);
            }

            @Override
            public void onComplete() {
                subscriber.onComplete();
            }
        });
    }

    @Override
    public Publisher<? extends ColumnDefinitions> getColumnDefinitions() {
        return rows.getColumnDefinitions();
    }

    @Override
    public Publisher<? extends ExecutionInfo> getExecutionInfos() {
        return rows.getExecutionInfos();
    }

    @Override
    public Publisher<Boolean> wasApplied() {
        return rows.wasApplied();
    }
}

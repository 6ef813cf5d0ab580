package io.github.hedge.cassandra;

import static io.github.hedge.cassandra.SimulacronCluster.INSERT;
import static io.github.hedge.cassandra.SimulacronCluster.REQUESTS_FOR_3_SLOW_PRIMARIES;
import static io.github.hedge.cassandra.SimulacronCluster.SELECT;
import static io.github.hedge.cassandra.SimulacronCluster.insert;
import static io.github.hedge.cassandra.SimulacronCluster.select;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.datastax.dse.driver.api.core.cql.reactive.ReactiveRow;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.event.CallCompleted;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * {@code executeReactive} through the wrapped session against a simulated 3-node cluster with one
 * node primed to be slow: executions are counted at the nodes.
 */
class HedgedCqlSessionReactiveTest {
    private static SimulacronCluster sim;
    private static CqlSession driver;
    private static String slowTarget;

    @BeforeAll
    static void start() {
        sim = new SimulacronCluster(3);
        driver = sim.session();
        slowTarget = sim.node(0).inetSocketAddress().getHostString() + ":9042";
    }

    @AfterAll
    static void stop() {
        driver.close();
        sim.close();
    }

    @BeforeEach
    void reset() {
        sim.fast();
        sim.clearLogs();
    }

    private static HedgedCqlSession wrap(Duration delay) {
        // not closed: closing it would close the shared driver session
        return HedgedCqlSession.builder(driver)
                .hedgeConfig(HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(delay))
                        .budget(HedgeBudget.unlimited())
                        .build())
                .latencyAware(LatencyAwareOptions.disabled())
                .build();
    }

    /** Subscribes to a publisher, requests everything, and completes with the number of items. */
    static final class Collector<T> implements Subscriber<T> {
        final CompletableFuture<List<T>> done = new CompletableFuture<>();
        final AtomicReference<Subscription> subscription = new AtomicReference<>();
        private final List<T> items = new ArrayList<>();

        static <T> Collector<T> of(Publisher<? extends T> publisher) {
            Collector<T> c = new Collector<>();
            publisher.subscribe(c);
            return c;
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription.set(s);
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(T item) {
            items.add(item);
        }

        @Override
        public void onError(Throwable t) {
            done.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            done.complete(items);
        }

        List<T> await() throws Exception {
            return done.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void should_hedge_executeReactive_to_another_replica_when_the_primary_is_slow() throws Exception {
        sim.slow(0, SELECT, 200);
        HedgedCqlSession session = wrap(Duration.ofMillis(20));
        List<CallCompleted> calls = new CopyOnWriteArrayList<>();
        session.executor().events().subscribe(CallCompleted.class, calls::add);

        List<String> coordinatorsOfSlowPrimaries = new ArrayList<>();
        for (int k = 0; k < REQUESTS_FOR_3_SLOW_PRIMARIES; k++) {
            var rows = session.executeReactive(select(k).setIdempotent(true));
            Collector<ReactiveRow> collected = Collector.of(rows);
            Collector<ExecutionInfo> infos = Collector.of(rows.getExecutionInfos());
            assertThat(collected.await()).isEmpty(); // the prime answers no rows
            int done = k + 1;
            await().until(() -> calls.size() == done);
            CallCompleted call = calls.get(calls.size() - 1);
            if (call.attempts().get(0).target().equals(slowTarget)) {
                assertThat(call.winningAttempt()).as("the hedge answered").isEqualTo(2);
                assertThat(call.attempts().get(1).target()).isNotEqualTo(slowTarget);
                coordinatorsOfSlowPrimaries.add(
                        String.valueOf(infos.await().get(0).getCoordinator().getEndPoint()));
            }
        }

        assertThat(calls).hasSize(REQUESTS_FOR_3_SLOW_PRIMARIES);
        assertThat(coordinatorsOfSlowPrimaries).hasSizeGreaterThanOrEqualTo(3).noneMatch(c -> c.contains(slowTarget));
        long hedges = calls.stream().mapToLong(CallCompleted::hedgesSent).sum();
        // the nodes received one execution per primary plus one per hedge
        assertThat(Arrays.stream(sim.received(SELECT)).sum()).isEqualTo(REQUESTS_FOR_3_SLOW_PRIMARIES + hedges);
    }

    @Test
    void should_execute_once_when_a_reactive_statement_is_not_idempotent() throws Exception {
        for (int node = 0; node < 3; node++) {
            sim.slow(node, INSERT, 100); // five times the delay on every node
        }
        HedgedCqlSession session = wrap(Duration.ofMillis(20));

        Collector.of(session.executeReactive(insert(1))).await(); // an INSERT is not inferred idempotent

        assertThat(Arrays.stream(sim.received(INSERT)).sum()).isEqualTo(1);
        assertThat(session.executor().stats().notHedgedNonIdempotent()).isEqualTo(1);
        assertThat(session.executor().stats().hedgesSent()).isZero();
    }

    @Test
    void should_cancel_the_call_and_send_no_hedge_when_the_rows_subscription_is_cancelled_first() {
        for (int node = 0; node < 3; node++) {
            sim.slow(node, SELECT, 2_000);
        }
        HedgedCqlSession session = wrap(Duration.ofSeconds(1));
        Collector<ReactiveRow> rows =
                Collector.of(session.executeReactive(select(1).setIdempotent(true)));
        await().until(() -> Arrays.stream(sim.received(SELECT)).sum() == 1); // the primary reached a node

        rows.subscription.get().cancel();

        await().untilAsserted(() -> {
            HedgeStats stats = session.executor().stats();
            assertThat(stats.cancelled()).isEqualTo(1);
            assertThat(stats.inFlightCalls()).isZero();
            assertThat(stats.pendingTimers()).as("no hedge timer left to fire").isZero();
        });
        assertThat(session.executor().stats().hedgesSent()).isZero();
        assertThat(Arrays.stream(sim.received(SELECT)).sum()).isEqualTo(1);
    }
}

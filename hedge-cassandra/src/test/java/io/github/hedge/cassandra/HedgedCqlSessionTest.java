package io.github.hedge.cassandra;

import static io.github.hedge.cassandra.SimulacronCluster.INSERT;
import static io.github.hedge.cassandra.SimulacronCluster.PAGED;
import static io.github.hedge.cassandra.SimulacronCluster.REQUESTS_FOR_3_SLOW_PRIMARIES;
import static io.github.hedge.cassandra.SimulacronCluster.SELECT;
import static io.github.hedge.cassandra.SimulacronCluster.insert;
import static io.github.hedge.cassandra.SimulacronCluster.paged;
import static io.github.hedge.cassandra.SimulacronCluster.select;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.internal.core.context.InternalDriverContext;
import com.datastax.oss.driver.internal.core.pool.ChannelPool;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.core.LatencyTracker;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.core.observation.HedgeObservations;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The wrapped session against a simulated 3-node cluster with one node primed to be slow. */
class HedgedCqlSessionTest {
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

    private static HedgedCqlSession wrap(HedgeConfig config, LatencyAwareOptions latencyAware) {
        // the wrapper is not closed in tests: closing it would close the shared driver session
        return HedgedCqlSession.builder(driver)
                .hedgeConfig(config)
                .latencyAware(latencyAware)
                .build();
    }

    private static List<CallCompleted> record(HedgedCqlSession session) {
        List<CallCompleted> calls = new CopyOnWriteArrayList<>();
        session.executor().events().subscribe(CallCompleted.class, calls::add);
        return calls;
    }

    /**
     * Runs {@code count} idempotent inserts on a new session, one after the other.
     *
     * @return the calls whose primary went to the slow node
     */
    /** Reads a new session makes before the inserts under test: enough for two answers of a node. */
    private static final int FIRST_ANSWERS = 10;

    /**
     * Reads a new session makes first, answered fast by every node: before any answer nothing is
     * known and the warm-up sends no hedge, and each node's first answer measured its connection.
     */
    private static void firstAnswers(HedgedCqlSession session) {
        for (int k = 0; k < FIRST_ANSWERS; k++) {
            session.execute(select(k).setIdempotent(true));
        }
    }

    private static List<CallCompleted> firstInsertsStartedOnTheSlowNode(HedgedCqlSession session, int count) {
        List<CallCompleted> calls = record(session);
        for (int k = 0; k < count; k++) {
            session.execute(insert(k).setIdempotent(true));
        }
        return calls.stream()
                .filter(c -> c.attempts().get(0).target().equals(slowTarget))
                .collect(Collectors.toList());
    }

    /** Waits (at most 10 s) until every attempt the session's executor started has ended. */
    private static void awaitNoPendingAttempts(HedgedCqlSession session) {
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .untilAsserted(() -> assertThat(session.executor().stats().pendingAttempts())
                        .as("pending attempts")
                        .isZero());
    }

    private static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    /** @return the requests the driver has in flight to {@code node} (losers left to finish included) */
    private static int inFlight(Node node) {
        ChannelPool pool = ((InternalDriverContext) driver.getContext())
                .getPoolManager()
                .getPools()
                .get(node);
        return pool == null ? 0 : pool.getInFlight();
    }

    @Test
    void should_send_the_hedge_at_the_configured_delay_to_another_replica_when_the_primary_is_slow() {
        sim.slow(0, INSERT, 200);
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                        .budget(HedgeBudget.unlimited())
                        .build(),
                LatencyAwareOptions.disabled());
        List<CallCompleted> calls = record(session);
        Map<Long, HedgeSent> sent = new ConcurrentHashMap<>();
        session.executor().events().subscribe(HedgeSent.class, e -> sent.put(e.callId(), e));

        List<CallCompleted> slowPrimaries = new ArrayList<>();
        List<String> coordinatorsOfSlowPrimaries = new ArrayList<>();
        for (int k = 0; k < REQUESTS_FOR_3_SLOW_PRIMARIES; k++) {
            ResultSet rs = session.execute(insert(k).setIdempotent(true));
            CallCompleted call = calls.get(calls.size() - 1);
            if (call.attempts().get(0).target().equals(slowTarget)) {
                slowPrimaries.add(call);
                coordinatorsOfSlowPrimaries.add(
                        String.valueOf(rs.getExecutionInfo().getCoordinator().getEndPoint()));
            }
        }

        List<CallCompleted> hedged =
                calls.stream().filter(c -> c.attempts().size() > 1).collect(Collectors.toList());
        // the load-balancing policy shuffles replicas: about a third of the primaries hit the slow node
        assertThat(slowPrimaries).hasSizeGreaterThanOrEqualTo(3);
        // every call whose primary hit the slow node was hedged (a fast primary that hiccups past
        // 20 ms on a loaded machine may be hedged too: those are held only to "another replica")
        long delay = TimeUnit.MILLISECONDS.toNanos(20);
        for (CallCompleted c : slowPrimaries) {
            assertThat(c.attempts()).hasSizeGreaterThan(1);
            assertThat(c.winningAttempt()).isEqualTo(2); // the fast replica answered
            // the executor sent it because the delay elapsed
            assertThat(sent.get(c.callId())).satisfies(h -> {
                assertThat(h.attemptNumber()).isEqualTo(2);
                assertThat(h.reason()).isEqualTo(HedgeSent.Reason.DELAY_ELAPSED);
            });
        }
        List<Long> delays = new ArrayList<>();
        for (CallCompleted c : hedged) {
            assertThat(c.attempts().get(1).target())
                    .isNotEqualTo(c.attempts().get(0).target()); // another replica
            delays.add(sent.get(c.callId()).delayNanos());
        }
        // the delay the executor decided for each hedge (HedgeSent.delayNanos, from the primary's
        // start): never under the configured one, and exactly it unless the machine stalled before
        // the executor asked the policy (then the time already elapsed), so exactly it in the median
        assertThat(delays).allSatisfy(d -> assertThat(d).isGreaterThanOrEqualTo(delay));
        assertThat(median(delays)).isEqualTo(delay);
        // the driver agrees: the answer came from a fast node
        assertThat(coordinatorsOfSlowPrimaries).isNotEmpty().noneMatch(c -> c.contains(slowTarget));
        // and the nodes received exactly one execution per primary plus one per hedge
        long[] received = sim.received(INSERT);
        assertThat(Arrays.stream(received).sum()).isEqualTo(REQUESTS_FOR_3_SLOW_PRIMARIES + hedged.size());
    }

    @Test
    void should_hedge_at_the_learned_percentile_when_the_delay_is_adaptive() throws Exception {
        sim.slow(0, SELECT, 150);
        // the fast nodes answer in 10 ms: a learned delay well above the time the executor takes
        // to start a primary and ask for the delay (HedgeSent.delayNanos is the longer of the two)
        sim.slow(1, SELECT, 10);
        sim.slow(2, SELECT, 10);
        // a tracker that refreshes every 50 ms, so the warm-up below ends soon after every replica
        // has enough samples (the default refreshes once a second)
        LatencyTracker tracker =
                LatencyTracker.builder().refreshInterval(Duration.ofMillis(50)).build();
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        // p90 is trusted from 5 / (1 - 0.9) = 50 samples (PercentileDelay)
                        .delay(DelayPolicy.percentile(0.9).minSamples(50).build())
                        .budget(HedgeBudget.unlimited())
                        .latencyTracker(tracker)
                        .build(),
                LatencyAwareOptions.disabled());
        List<CallCompleted> calls = record(session);
        // warm up until each of the three replicas holds minSamples visible samples: the delay is
        // then the median replica's p90, which the slow minority cannot lift (how many calls that
        // takes depends on the driver's shuffling, so it is not a fixed count)
        List<String> targets = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            targets.add(sim.node(i).inetSocketAddress().getHostString() + ":9042");
        }
        int warmUp = 0;
        while (warmUp < 1000 && !targets.stream().allMatch(t -> tracker.sampleCount(t) >= 50)) {
            session.execute(select(warmUp++)); // a plain SELECT: inferred idempotent
        }
        assertThat(targets).allMatch(t -> tracker.sampleCount(t) >= 50);
        long learned = session.executor().currentDelayNanos();
        assertThat(learned).isPositive().isLessThan(TimeUnit.MILLISECONDS.toNanos(100));
        Map<Long, HedgeSent> sent = new ConcurrentHashMap<>();
        session.executor().events().subscribe(HedgeSent.class, e -> sent.put(e.callId(), e));
        calls.clear();
        // the learned delay moves a little as the tracker refreshes (every 50 ms): the range of what
        // it was before and after each call bounds the delay each hedge was sent at
        long minDelay = Long.MAX_VALUE;
        long maxDelay = Long.MIN_VALUE;
        for (int k = 0; k < REQUESTS_FOR_3_SLOW_PRIMARIES; k++) {
            long before = session.executor().currentDelayNanos();
            session.execute(select(k));
            long after = session.executor().currentDelayNanos();
            minDelay = Math.min(minDelay, Math.min(before, after));
            maxDelay = Math.max(maxDelay, Math.max(before, after));
        }
        List<CallCompleted> hedged =
                calls.stream().filter(c -> c.attempts().size() > 1).collect(Collectors.toList());
        assertThat(hedged).hasSizeGreaterThanOrEqualTo(3);
        // learned from the fast nodes' 10 ms, not the slow node's 150 ms
        assertThat(minDelay).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(10));
        assertThat(maxDelay).isLessThan(TimeUnit.MILLISECONDS.toNanos(100));
        List<Long> hedgeDelays = new ArrayList<>();
        for (CallCompleted c : hedged) {
            assertThat(c.attempts().get(1).target())
                    .isNotEqualTo(c.attempts().get(0).target());
            // sent because the learned delay elapsed: never under it
            HedgeSent h = sent.get(c.callId());
            assertThat(h.reason()).isEqualTo(HedgeSent.Reason.DELAY_ELAPSED);
            assertThat(h.delayNanos()).isGreaterThanOrEqualTo(minDelay);
            hedgeDelays.add(h.delayNanos());
        }
        // and at it, as the executor decided it (longer only when the machine stalled before it asked)
        assertThat(median(hedgeDelays)).isBetween(minDelay, maxDelay);
        // every call whose primary went to the slow node was won by its hedge
        assertThat(hedged.stream().filter(c -> c.attempts().get(0).target().equals(slowTarget)))
                .isNotEmpty()
                .allSatisfy(c -> assertThat(c.winningAttempt()).isEqualTo(2));
    }

    @Test
    void should_compute_what_hedging_saved_from_real_latencies_when_losers_finish() throws Exception {
        sim.slow(0, SELECT, 100);
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.unlimited())
                        .loserSampling(1.0) // as in HedgedCqlSession.defaultConfig()
                        .build(),
                LatencyAwareOptions.disabled());
        for (int k = 0; k < 30; k++) {
            session.execute(select(k));
        }
        awaitNoPendingAttempts(session); // the slow primaries still run on the server, and are waited for
        assertThat(session.executor().stats().hedgesWon()).isPositive();
        // savings refresh once a second: wait until the window shows all 30 calls and their primaries
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> session.executor().savings().hedged().count() == 30
                        && session.executor().savings().unhedgedEstimate().count() == 30);
        var saved = session.executor().savings();
        // every beaten primary finished: the estimate holds real latencies, no lower bounds
        assertThat(saved.censoredPrimaries()).isZero();
        assertThat(saved.unhedgedEstimate().maxNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
        assertThat(saved.hedged().maxNanos())
                .isLessThan(saved.unhedgedEstimate().maxNanos());
    }

    @Test
    void should_hedge_its_first_calls_around_the_slow_node_when_the_session_is_new() throws Exception {
        sim.slow(0, INSERT, 1000);
        // the builder's defaults: no estimate yet, so the warm-up delay and the budget's initial tokens
        HedgedCqlSession session = HedgedCqlSession.builder(driver).build();
        firstAnswers(session);
        List<CallCompleted> onSlow = firstInsertsStartedOnTheSlowNode(session, 60);
        // no call waited for the slow node: each that started there was won by a hedge elsewhere
        assertThat(onSlow).allSatisfy(c -> {
            assertThat(c.winningAttempt()).isEqualTo(2);
            assertThat(c.attempts().get(1).target()).isNotEqualTo(slowTarget);
        });
        // and once it is silent with an attempt in flight, primaries go elsewhere (stall detection
        // needs 5 answers from the other nodes first): 1 to 8 of 60 in runs on a loaded machine
        assertThat(onSlow.size()).isLessThanOrEqualTo(15);
        assertThat(session.executor().stats().budgetDenied()).isZero();
        awaitNoPendingAttempts(session);
    }

    @Test
    void should_wait_on_the_slow_node_for_its_first_calls_when_the_session_is_new_and_its_delay_has_no_warm_up()
            throws Exception {
        sim.slow(0, INSERT, 1000);
        // defaultConfig() with a delay that has no warm-up: no hedge before the percentile's first
        // estimate (125 samples)
        HedgedCqlSession session = HedgedCqlSession.builder(driver)
                .hedgeConfig(HedgeConfig.from(HedgedCqlSession.defaultConfig())
                        .delay(DelayPolicy.percentile(0.96)
                                .fallback(DelayPolicy.never())
                                .build())
                        .build())
                .build();
        List<CallCompleted> onSlow = firstInsertsStartedOnTheSlowNode(session, 60);
        // every call that started on the slow node waited for its 1 s answer, unhedged, until
        // latency-aware ordering had its 5 measurements of the node and put it last
        assertThat(onSlow).hasSizeGreaterThanOrEqualTo(3).allSatisfy(c -> {
            assertThat(c.attempts()).hasSize(1);
            assertThat(c.winningAttempt()).isEqualTo(1);
        });
        assertThat(session.executor().stats().hedgesSent()).isZero();
        awaitNoPendingAttempts(session);
    }

    @Test
    void should_hedge_its_first_calls_around_the_slow_node_when_the_session_is_new_and_ordering_is_off()
            throws Exception {
        sim.slow(0, INSERT, 1000);
        // the builder's defaults without ordering: primaries keep going to the slow node, but the
        // warm-up delay and the budget's initial tokens hedge each of them before the first estimate
        HedgedCqlSession session = HedgedCqlSession.builder(driver)
                .latencyAware(LatencyAwareOptions.disabled())
                .build();
        firstAnswers(session);
        List<CallCompleted> onSlow = firstInsertsStartedOnTheSlowNode(session, 30);
        assertThat(onSlow).isNotEmpty().allSatisfy(c -> {
            assertThat(c.winningAttempt()).isEqualTo(2);
            assertThat(c.attempts().get(1).target()).isNotEqualTo(slowTarget);
        });
        assertThat(session.executor().stats().budgetDenied()).isZero();
        awaitNoPendingAttempts(session);
    }

    @Test
    void should_record_a_call_observation_with_attempt_children_and_the_winner_when_hedges_beat_the_slow_node() {
        sim.slow(0, INSERT, 200);
        ObservationRegistry registry = ObservationRegistry.create();
        Queue<Observation.Context> started = new ConcurrentLinkedQueue<>();
        Set<Observation.Context> stopped = ConcurrentHashMap.newKeySet();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStart(Observation.Context c) {
                started.add(c);
            }

            @Override
            public void onStop(Observation.Context c) {
                stopped.add(c);
            }

            @Override
            public boolean supportsContext(Observation.Context c) {
                return true;
            }
        });
        HedgedCqlSession session = wrap(
                HedgeConfig.from(HedgedCqlSession.defaultConfig(HedgedCqlSession.Losers.DROP))
                        .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                        .budget(HedgeBudget.unlimited())
                        .callDecorator(HedgeObservations.of(registry))
                        .build(),
                LatencyAwareOptions.disabled());
        List<CallCompleted> calls = record(session);

        for (int k = 0; k < REQUESTS_FOR_3_SLOW_PRIMARIES; k++) {
            session.execute(insert(k).setIdempotent(true));
        }
        awaitNoPendingAttempts(session);

        List<Observation.Context> callObs = started.stream()
                .filter(c -> c.getName().equals(HedgeObservations.CALL_NAME))
                .toList();
        List<Observation.Context> attemptObs = started.stream()
                .filter(c -> c.getName().equals(HedgeObservations.ATTEMPT_NAME))
                .toList();
        assertThat(callObs).hasSize(calls.size());
        long hedgeWins = calls.stream().filter(CallCompleted::hedgeWon).count();
        assertThat(hedgeWins).isGreaterThanOrEqualTo(3); // the calls whose primary hit the slow node
        assertThat(callObs)
                .filteredOn(c ->
                        "2".equals(c.getLowCardinalityKeyValue("hedge.winner").getValue()))
                .hasSize((int) hedgeWins);
        assertThat(attemptObs)
                .filteredOn(a ->
                        a.getLowCardinalityKeyValue("hedge.attempt").getValue().equals("2"))
                .extracting(a -> a.getLowCardinalityKeyValue("hedge.outcome").getValue())
                .isSubsetOf("won", "lost-cancelled")
                .filteredOn("won"::equals)
                .hasSize((int) hedgeWins);
        // every beaten primary (the slow node's) ended as a cancelled loser, under its call
        assertThat(attemptObs)
                .filteredOn(a ->
                        a.getLowCardinalityKeyValue("hedge.attempt").getValue().equals("1")
                                && !a.getLowCardinalityKeyValue("hedge.outcome")
                                        .getValue()
                                        .equals("won"))
                .hasSize((int) hedgeWins)
                .allSatisfy(a -> {
                    assertThat(a.getLowCardinalityKeyValue("hedge.outcome").getValue())
                            .isEqualTo("lost-cancelled");
                    assertThat(callObs).contains((Observation.Context)
                            a.getParentObservation().getContextView());
                });
        assertThat(stopped).containsAll(started);
        // no statement text, bound value or address in any key value
        assertThat(started)
                .flatExtracting(c -> List.copyOf(
                        c.getAllKeyValues().stream().map(kv -> kv.getValue()).toList()))
                .noneMatch(v -> v.contains("INSERT") || v.contains("127.0.") || v.contains(":9042"));
    }

    @Test
    void should_leave_beaten_primaries_running_by_default_only_when_losers_finish_anyway() {
        assertThat(HedgedCqlSession.defaultConfig().loserSampling()).isEqualTo(1.0);
        assertThat(HedgedCqlSession.defaultConfig(HedgedCqlSession.Losers.LET_FINISH)
                        .loserSampling())
                .isEqualTo(1.0);
        assertThat(HedgedCqlSession.defaultConfig(HedgedCqlSession.Losers.DROP).loserSampling())
                .isZero();
    }

    @Test
    void should_cap_extra_executions_at_the_budget_when_every_call_wants_a_hedge() {
        for (int i = 0; i < 3; i++) {
            sim.slow(i, INSERT, 30);
        }
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(2)))
                        .budget(HedgeBudget.builder()
                                .ratio(0.1)
                                .window(Duration.ofSeconds(30))
                                .build())
                        .maxAttempts(3)
                        .build(),
                LatencyAwareOptions.disabled());
        int calls = 300;
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        for (int k = 0; k < calls; k++) {
            inFlight.add(session.executeAsync(insert(k).setIdempotent(true)).toCompletableFuture());
            if (inFlight.size() == 30) {
                CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]))
                        .join();
                inFlight.clear();
            }
        }
        CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0])).join();

        long executions = Arrays.stream(sim.received(INSERT)).sum();
        long extra = executions - calls;
        assertThat(extra).isPositive().isLessThanOrEqualTo((long) (0.1 * calls));
        assertThat(session.executor().stats().budgetDenied()).isPositive();
    }

    @Test
    void should_run_on_the_registry_executor_and_follow_its_replacement_when_built_with_a_registry() {
        HedgedExecutorRegistry registry = HedgedExecutorRegistry.ofDefaults();
        HedgeConfig first = HedgeConfig.builder()
                .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                .budget(HedgeBudget.unlimited())
                .build();
        HedgedCqlSession session = HedgedCqlSession.builder(driver)
                .name("reads")
                .hedgeConfig(first)
                .registry(registry)
                .latencyAware(LatencyAwareOptions.disabled())
                .build();

        // built in the registry under the session's name, from the session's configuration
        HedgedExecutor registered = registry.find("reads").orElseThrow();
        assertThat(session.executor()).isSameAs(registered);
        assertThat(registered.config()).isSameAs(first);
        session.execute(select(1).setIdempotent(true));
        assertThat(registered.stats().calls()).isEqualTo(1);

        // reconfigured at runtime: the registry's executor is replaced, the next statement uses the new one
        HedgedExecutor replacement = HedgedExecutor.of(
                "reads", HedgeConfig.from(first).maxAttempts(3).build());
        registry.replace("reads", replacement);
        assertThat(session.executor()).isSameAs(replacement);
        session.execute(select(2).setIdempotent(true));
        assertThat(replacement.stats().calls()).isEqualTo(1);
        assertThat(registered.stats().calls()).isEqualTo(1);
        assertThat(Arrays.stream(sim.received(SELECT)).sum()).isEqualTo(2);
    }

    @Test
    void should_use_the_executor_already_in_the_registry_when_one_has_the_session_name() {
        HedgedExecutorRegistry registry = HedgedExecutorRegistry.ofDefaults();
        HedgedExecutor existing = registry.executor(
                "cassandra", HedgeConfig.builder().maxAttempts(3).build());
        HedgedCqlSession session =
                HedgedCqlSession.builder(driver).registry(registry).build();
        assertThat(session.executor()).isSameAs(existing);
        assertThat(registry.getAllExecutors()).containsExactly(existing);
    }

    @Test
    void should_never_hedge_when_the_statement_is_not_idempotent() {
        sim.slow(0, INSERT, 60);
        sim.slow(0, SELECT, 60);
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(2)))
                        .budget(HedgeBudget.unlimited())
                        .build(),
                LatencyAwareOptions.disabled());
        for (int k = 0; k < 10; k++) {
            session.execute(insert(k)); // undeclared INSERT: not inferred idempotent
            session.execute(insert(k).setIdempotent(false)); // declared non-idempotent
            session.execute(select(k).setIdempotent(false)); // a SELECT the user opted out
            session.execute(SimpleStatement.newInstance("UPDATE ks.c SET n = n + 1 WHERE k = ?", k));
        }
        assertThat(Arrays.stream(sim.received(INSERT)).sum()).isEqualTo(20);
        assertThat(Arrays.stream(sim.received(SELECT)).sum()).isEqualTo(10);
        assertThat(session.executor().stats().notHedgedNonIdempotent()).isEqualTo(40);
        assertThat(session.executor().stats().hedgesSent()).isZero();
    }

    @Test
    void should_stop_at_the_last_untried_replica_and_report_no_untried_target_when_every_replica_is_slow() {
        for (int node = 0; node < 3; node++) {
            sim.slow(node, INSERT, 60);
        }
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(5)))
                        .budget(HedgeBudget.unlimited())
                        .maxAttempts(5)
                        .build(),
                LatencyAwareOptions.disabled());
        List<CallCompleted> calls = record(session);
        List<NotHedged> notHedged = new CopyOnWriteArrayList<>();
        session.executor().events().subscribe(NotHedged.class, notHedged::add);

        session.execute(insert(1).setIdempotent(true));
        awaitNoPendingAttempts(session);

        // three attempts, one per replica, and no fourth to a replica already tried (maxAttempts 5)
        assertThat(calls).hasSize(1);
        assertThat(calls.get(0).attempts().stream().map(a -> a.target()).distinct())
                .hasSize(3);
        assertThat(calls.get(0).attempts()).hasSize(3);
        assertThat(Arrays.stream(sim.received(INSERT)).sum()).isEqualTo(3); // counted at the nodes
        // reported for what it is: not server pushback, not maxAttempts
        assertThat(notHedged).extracting(NotHedged::reason).containsExactly(NotHedged.Reason.NO_UNTRIED_TARGET);
    }

    @Test
    void should_log_one_info_line_naming_the_fix_when_statements_are_not_idempotent() {
        ch.qos.logback.classic.Logger logger =
                (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(HedgedCqlSession.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            HedgedCqlSession session = wrap(HedgeConfig.builder().build(), LatencyAwareOptions.disabled());
            for (int k = 0; k < 10; k++) {
                session.execute(insert(k)); // undeclared INSERT: not hedged
            }
            session.execute(select(1)); // hedged: not logged
            // 10 statements well within a minute: one line (the interval itself: RateLimitedLogTest)
            assertThat(appender.list).singleElement().satisfies(e -> {
                assertThat(e.getLevel()).isEqualTo(Level.INFO);
                assertThat(e.getFormattedMessage())
                        .isEqualTo("not hedged: non-idempotent statement (0 more since the last line); declare"
                                + " statements that may run twice with Statement.setIdempotent(true) or"
                                + " basic.request.default-idempotence = true");
            });
            assertThat(session.executor().stats().notHedgedNonIdempotent()).isEqualTo(10);
        } finally {
            logger.detachAppender(appender);
        }
    }

    @Test
    void should_stop_primaries_to_the_slow_node_and_resume_after_it_heals_when_latency_aware() throws Exception {
        sim.slow(0, INSERT, 100);
        // the system's time plus what the test skips: the retry period passes when the test says so
        AtomicLong skipped = new AtomicLong();
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .ticker(() -> System.nanoTime() + skipped.get())
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.unlimited())
                        .build(),
                LatencyAwareOptions.builder()
                        .minMeasurements(3)
                        .exclusionThreshold(5.0) // robust to a healed node's first answers on a loaded machine
                        .retryPeriod(Duration.ofSeconds(60)) // longer than the first phase: no probe during it
                        .build());
        List<CallCompleted> calls = record(session);
        Node slowNode = driver.getMetadata().getNodes().values().stream()
                .filter(n -> n.getEndPoint().resolve().toString().contains(slowTarget.replace(":9042", "")))
                .findFirst()
                .orElseThrow();
        // losers finish in the driver 100 ms after they started (LET_FINISH), so the slow node's
        // measurements arrive late, and while one of them runs the node is put last as stalled. The
        // executor's pending attempts do not show them (the executor's copy of a loser ends when it
        // loses), so a node excluded with none pending may be excluded only as stalled, and be back
        // in the plans when its loser ends with fewer than minMeasurements measurements (2 of 30
        // primaries went there in one CI run). Call until its score alone keeps it last: excluded
        // after every loser has had the time to end
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int n = 0;
        while (System.nanoTime() < until) {
            if (session.isExcluded(slowNode) && session.executor().stats().pendingAttempts() == 0) {
                // wait until no loser is left in flight on the slow node, as the driver counts them
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> inFlight(slowNode) == 0);
                if (session.isExcluded(slowNode)) {
                    break;
                }
            }
            session.execute(insert(n++).setIdempotent(true));
        }
        assertThat(session.isExcluded(slowNode)).isTrue();
        calls.clear();
        for (int i = 0; i < 30; i++) {
            session.execute(insert(i).setIdempotent(true));
        }
        assertThat(calls)
                .hasSize(30)
                .noneMatch(c -> c.attempts().get(0).target().equals(slowTarget));

        sim.heal(0);
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> inFlight(slowNode) == 0);
        assertThat(session.isExcluded(slowNode)).isTrue();
        skipped.addAndGet(TimeUnit.SECONDS.toNanos(61)); // past the retry period: the node is probed again
        calls.clear();
        for (int k = 0; k < 60; k++) {
            session.execute(insert(k).setIdempotent(true));
        }
        long primariesToHealed = calls.stream()
                .filter(c -> c.attempts().get(0).target().equals(slowTarget))
                .count();
        assertThat(primariesToHealed).isGreaterThanOrEqualTo(5);
    }

    /**
     * Every node answers after 5 ms; node 0 also stalls one request in five for 150 ms (hedge after
     * 10 ms, unlimited budget, losers dropped: a stall's latency is never measured, only bounded
     * at about 10 ms, twice the usual latency, which lifts node 0's average by a fifth): 300 calls
     * to learn it, then 150 counted.
     *
     * @return how many of the 150 counted calls sent their primary to node 0
     */
    private static long primariesToANodeThatStallsAFifth(LatencyAwareOptions latencyAware) {
        HedgedCqlSession session = HedgedCqlSession.builder(driver)
                .losers(HedgedCqlSession.Losers.DROP)
                .hedgeConfig(HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.unlimited())
                        .build())
                .latencyAware(latencyAware)
                .build();
        List<CallCompleted> calls = record(session);
        sim.stallShare(0, 5, 150, 5);
        sim.slow(1, SELECT, 5);
        sim.slow(2, SELECT, 5);
        try {
            for (int k = 0; k < 300; k++) {
                session.execute(select(k));
            }
            calls.clear();
            for (int k = 300; k < 450; k++) {
                session.execute(select(k));
            }
            assertThat(calls).hasSize(150).allMatch(c -> c.outcome() == CallCompleted.CallOutcome.SUCCESS);
            return calls.stream()
                    .filter(c -> c.attempts().get(0).target().equals(slowTarget))
                    .count();
        } finally {
            sim.fast();
            awaitNoPendingAttempts(session);
        }
    }

    @Test
    void should_keep_primaries_off_a_node_that_stalls_a_fifth_of_its_requests_when_latency_aware() {
        // what the session measures of it is its peers' latency and lower bounds near the delay:
        // only the share of its primaries that had to be hedged tells it apart (without ordering,
        // about a third of 150 go there: the test below)
        assertThat(primariesToANodeThatStallsAFifth(LatencyAwareOptions.ofDefaults()))
                .isLessThanOrEqualTo(20);
    }

    @Test
    void should_keep_sending_primaries_to_a_node_that_stalls_a_fifth_of_its_requests_when_ordering_is_off() {
        assertThat(primariesToANodeThatStallsAFifth(LatencyAwareOptions.disabled()))
                .isGreaterThanOrEqualTo(30);
    }

    @Test
    void should_keep_primaries_off_the_slow_node_when_losers_are_dropped_before_they_measure_it() {
        sim.slow(0, INSERT, 100);
        // each loser on the slow node is cancelled about 5 ms in, when the hedge answers: all the
        // session learns of the node is "at least 5 ms", under the exclusion threshold (10 x the
        // 1 ms floor). Five such lost races in a row exclude it (LatencyScores.LOST_IN_A_ROW);
        // before, the lower bounds were taken as latencies and about a third of the primaries
        // kept going there
        HedgedCqlSession session = HedgedCqlSession.builder(driver)
                .losers(HedgedCqlSession.Losers.DROP)
                .hedgeConfig(HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(5)))
                        .budget(HedgeBudget.unlimited())
                        .build())
                .latencyAware(LatencyAwareOptions.builder()
                        .exclusionThreshold(10.0)
                        .retryPeriod(Duration.ofSeconds(60)) // no probe during the test
                        .build())
                .build();
        List<CallCompleted> onSlow = firstInsertsStartedOnTheSlowNode(session, 60);
        assertThat(session.executor().stats().calls()).isEqualTo(60);
        assertThat(session.executor().stats().successes()).isEqualTo(60);
        assertThat(onSlow).hasSizeLessThanOrEqualTo(5);
        awaitNoPendingAttempts(session);
    }

    /**
     * Node 0 measured while healthy (60 calls), then it stops answering for 2 s, as in a GC pause,
     * while 4 threads make 40 calls each (hedge after 10 ms, unlimited budget).
     *
     * @return how many of the 160 calls sent their primary to the stalled node
     */
    private static long primariesToANodeThatStalls(LatencyAwareOptions latencyAware) throws Exception {
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.unlimited())
                        .build(),
                latencyAware);
        List<CallCompleted> calls = record(session);
        for (int k = 0; k < 60; k++) {
            session.execute(select(k)); // every node measured while healthy
        }
        calls.clear();
        sim.slow(0, SELECT, 2000); // node 0 stops answering new requests for 2 s, as in a GC pause

        int threads = 4;
        int perThread = 40;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int base = t * perThread;
                done.add(pool.submit(() -> {
                    for (int k = 0; k < perThread; k++) {
                        session.execute(select(base + k));
                    }
                }));
            }
            for (java.util.concurrent.Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(calls).hasSize(threads * perThread);
        assertThat(calls).allMatch(c -> c.outcome() == CallCompleted.CallOutcome.SUCCESS);
        long primariesToStalled = calls.stream()
                .filter(c -> c.attempts().get(0).target().equals(slowTarget))
                .count();

        sim.heal(0);
        awaitNoPendingAttempts(session); // the stalled requests answer after their 2 s: nothing is left behind
        return primariesToStalled;
    }

    @Test
    void should_stop_sending_primaries_to_a_node_when_it_stalls_with_requests_in_flight() throws Exception {
        // the node is put last as soon as it has been silent for 4x its usual latency with requests
        // in flight (the counterpart below: without ordering, about a third of 160 went there)
        assertThat(primariesToANodeThatStalls(
                        LatencyAwareOptions.builder().minMeasurements(3).build()))
                .isLessThanOrEqualTo(12);
    }

    @Test
    void should_keep_sending_primaries_to_a_stalled_node_when_latency_aware_ordering_is_off() throws Exception {
        // stall detection reorders plans through latency-aware ordering: without it, the driver's
        // shuffle sends about a third of 160 primaries (53) to the stalled node; at least a fifth
        // (32) is 3.6 standard deviations below that, far above the 12 allowed with detection
        assertThat(primariesToANodeThatStalls(LatencyAwareOptions.disabled())).isGreaterThanOrEqualTo(32);
    }

    @Test
    void should_fetch_each_later_page_once_from_the_first_page_replica_when_the_result_has_more_pages()
            throws Exception {
        sim.primeTwoPages(100); // the second page takes 100 ms on every node: ten times the hedge delay
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.unlimited())
                        .build(),
                LatencyAwareOptions.disabled());
        Map<Integer, Integer> firstPageNode = new HashMap<>();
        for (int k = 0; k < 6; k++) {
            List<Integer> values = new ArrayList<>();
            List<ExecutionInfo> pages;
            if (k % 2 == 0) { // synchronous: iterating fetches the second page
                ResultSet rs = session.execute(paged(k)); // a plain SELECT: inferred idempotent
                rs.forEach(row -> values.add(row.getInt("v")));
                pages = rs.getExecutionInfos();
            } else { // asynchronous: the caller fetches it
                AsyncResultSet first =
                        session.executeAsync(paged(k)).toCompletableFuture().get(10, TimeUnit.SECONDS);
                first.currentPage().forEach(row -> values.add(row.getInt("v")));
                assertThat(first.hasMorePages()).isTrue();
                AsyncResultSet second =
                        first.fetchNextPage().toCompletableFuture().get(10, TimeUnit.SECONDS);
                second.currentPage().forEach(row -> values.add(row.getInt("v")));
                pages = List.of(first.getExecutionInfo(), second.getExecutionInfo());
            }
            assertThat(values).containsExactly(1, 2);
            assertThat(pages).hasSize(2);
            assertThat(pages.get(1).getCoordinator()).isEqualTo(pages.get(0).getCoordinator());
            firstPageNode.put(k, sim.indexOf(pages.get(0).getCoordinator()));
        }
        // each second page was received once, by the node that answered the first page: not hedged
        // although it took ten times the delay
        List<SimulacronCluster.Reception> laterPages = sim.receptions(PAGED).stream()
                .filter(SimulacronCluster.Reception::laterPage)
                .collect(Collectors.toList());
        assertThat(laterPages).hasSize(6).allSatisfy(r -> assertThat(r.node()).isEqualTo(firstPageNode.get(r.key())));
        // and only the first pages went through hedge's executor
        assertThat(session.executor().stats().calls()).isEqualTo(6);
    }

    @Test
    void should_hedge_a_statement_resumed_from_a_paging_state_when_the_caller_executes_it() {
        sim.primeTwoPages(100);
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.unlimited())
                        .build(),
                LatencyAwareOptions.disabled());
        ByteBuffer pagingState = session.execute(paged(0)).getExecutionInfo().getPagingState();
        assertThat(pagingState).isNotNull();
        long hedgesBefore = session.executor().stats().hedgesSent();

        // the caller resumes the query itself (say, the next page of a web listing): a statement like any other
        ResultSet rs = session.execute(paged(0).setPagingState(pagingState));

        assertThat(rs.one().getInt("v")).isEqualTo(2);
        List<SimulacronCluster.Reception> laterPages = sim.receptions(PAGED).stream()
                .filter(SimulacronCluster.Reception::laterPage)
                .collect(Collectors.toList());
        // 100 ms on every node, 10 ms delay: the primary and a hedge, on two replicas
        assertThat(laterPages).hasSize(2);
        assertThat(laterPages.get(1).node()).isNotEqualTo(laterPages.get(0).node());
        assertThat(session.executor().stats().hedgesSent() - hedgesBefore).isEqualTo(1);
    }

    @Test
    void should_pass_prepare_straight_to_the_driver_when_it_is_not_an_execute_call() {
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .budget(HedgeBudget.unlimited())
                        .build(),
                LatencyAwareOptions.disabled());

        PreparedStatement prepared = session.prepare(SELECT);
        assertThat(prepared.getQuery()).isEqualTo(SELECT);
        assertThat(Arrays.stream(sim.prepared(SELECT)).sum()).isPositive();

        // it did not go through hedge's executor (executeReactive does: HedgedCqlSessionReactiveTest)
        assertThat(session.executor().stats().calls()).isZero();
    }

    @Test
    void should_hedge_across_coordinators_when_the_statement_has_no_routing_key() {
        sim.slow(0, INSERT, 100);
        HedgedCqlSession session = wrap(
                HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofMillis(5)))
                        .budget(HedgeBudget.unlimited())
                        .build(),
                LatencyAwareOptions.disabled());
        List<CallCompleted> calls = record(session);
        for (int k = 0; k < 15; k++) {
            session.execute(SimpleStatement.newInstance(INSERT, k, k).setIdempotent(true));
        }
        assertThat(session.unroutableCount()).isEqualTo(15);
        assertThat(calls).filteredOn(c -> c.attempts().size() > 1).isNotEmpty().allSatisfy(c -> {
            assertThat(c.attempts().get(1).target())
                    .isNotEqualTo(c.attempts().get(0).target());
            if (c.attempts().get(0).target().equals(slowTarget)) {
                assertThat(c.winningAttempt()).isEqualTo(2); // a fast primary that hiccups may still win
            }
        });
    }
}

package io.github.hedge.cassandra;

import static io.github.hedge.cassandra.SimulacronCluster.INSERT;
import static io.github.hedge.cassandra.SimulacronCluster.REQUESTS_FOR_3_SLOW_PRIMARIES;
import static io.github.hedge.cassandra.SimulacronCluster.insert;
import static io.github.hedge.cassandra.SimulacronCluster.select;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.internal.core.context.InternalDriverContext;
import com.datastax.oss.driver.internal.core.pool.ChannelPool;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.core.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The drop-in policy against a simulated 3-node cluster with one node primed to be slow. */
class HedgeSpeculativeExecutionPolicyTest {
    private static SimulacronCluster sim;

    @BeforeAll
    static void start() {
        sim = new SimulacronCluster(3);
    }

    @AfterAll
    static void stop() {
        sim.close();
    }

    @BeforeEach
    void reset() {
        sim.fast();
        sim.clearLogs();
    }

    /** hedge's two policies, a fixed delay, the given budget; the driver timer ticks every 1 ms. */
    private static UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> hedge(
            Duration delay, int maxExecutions, double maxExtraLoad) {
        return b -> b.withClass(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, HedgeLoadBalancingPolicy.class)
                .withClass(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, HedgeSpeculativeExecutionPolicy.class)
                .withString(HedgeDriverOption.DELAY_KIND, "fixed")
                .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, delay)
                .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, maxExecutions)
                .withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, maxExtraLoad);
    }

    private static HedgeSpeculativeExecutionPolicy policy(CqlSession session, String profile) {
        return (HedgeSpeculativeExecutionPolicy) session.getContext().getSpeculativeExecutionPolicy(profile);
    }

    private static Node anyNode(CqlSession session) {
        return session.getMetadata().getNodes().values().iterator().next();
    }

    /**
     * @return for each key the nodes received more than once, the time from its first execution's
     *     arrival to its second's, in ms, as Simulacron logged them
     */
    private static List<Long> speculativeExecutionGapsMs(String query) {
        Map<Integer, List<Long>> arrivals = new TreeMap<>();
        for (SimulacronCluster.Reception r : sim.receptions(query)) {
            arrivals.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.receivedAt());
        }
        return arrivals.values().stream()
                .filter(times -> times.size() > 1)
                .map(times -> times.get(1) - times.get(0))
                .collect(Collectors.toList());
    }

    @Test
    void should_fire_at_the_configured_delay_to_another_replica_when_the_primary_is_slow() {
        sim.slow(0, INSERT, 200);
        try (CqlSession session = sim.session(hedge(Duration.ofMillis(20), 2, 1.0))) {
            int wonBySpeculativeExecution = 0;
            for (int k = 0; k < REQUESTS_FOR_3_SLOW_PRIMARIES; k++) {
                ResultSet rs = session.execute(insert(k).setIdempotent(true));
                ExecutionInfo info = rs.getExecutionInfo();
                // (a fast primary that hiccups past 20 ms on a loaded machine may still win: not counted)
                if (info.getSpeculativeExecutionCount() > 0 && info.getSuccessfulExecutionIndex() == 1) {
                    wonBySpeculativeExecution++;
                    assertThat(sim.indexOf(info.getCoordinator())).isNotZero(); // a fast replica answered
                }
            }
            assertThat(wonBySpeculativeExecution).isGreaterThanOrEqualTo(3);
            // what the policy decided: the configured delay, in the driver's whole milliseconds
            assertThat(policy(session, "default").nextExecution(anyNode(session), null, insert(0), 1))
                    .isEqualTo(20);
            // and the nodes saw it: each speculative execution arrived at least about 20 ms after its
            // primary (Simulacron logs in whole milliseconds; 5 ms of margin for the primary's own
            // trip). No upper bound: how late a loaded machine's timer fires is not the policy's doing
            assertThat(speculativeExecutionGapsMs(INSERT))
                    .hasSizeGreaterThanOrEqualTo(3)
                    .allSatisfy(gap -> assertThat(gap).isGreaterThanOrEqualTo(20 - 5));
            SpeculativeExecutionStats stats = policy(session, "default").stats();
            assertThat(Arrays.stream(sim.received(INSERT)).sum())
                    .isEqualTo(REQUESTS_FOR_3_SLOW_PRIMARIES + stats.sent());
            // per request (its key), the nodes that received it, primary first
            Map<Integer, List<Integer>> receivers = sim.receiversByKey(INSERT);
            assertThat(receivers).hasSize(REQUESTS_FOR_3_SLOW_PRIMARIES);
            List<List<Integer>> primaryOnSlowNode = receivers.values().stream()
                    .filter(nodes -> nodes.get(0) == 0)
                    .collect(Collectors.toList());
            // every request whose primary went to the slow node got one speculative execution, on another replica
            assertThat(primaryOnSlowNode)
                    .hasSizeGreaterThanOrEqualTo(3)
                    .allSatisfy(nodes -> assertThat(nodes).hasSize(2).element(1).isNotEqualTo(0));
            // (a fast primary that hiccups past 20 ms on a loaded machine gets a speculative execution
            // to the next node of its plan, which may be the slow one: ordering is off here, so what
            // the slow node receives besides primaries is not asserted)
        }
    }

    @Test
    void should_cap_extra_executions_at_the_budget_counted_from_what_the_nodes_received() {
        for (int i = 0; i < 3; i++) {
            sim.slow(i, INSERT, 30);
        }
        try (CqlSession session = sim.session(hedge(Duration.ofMillis(2), 3, 0.1))) {
            int requests = 300;
            List<CompletableFuture<AsyncResultSet>> inFlight = new ArrayList<>();
            for (int k = 0; k < requests; k++) {
                inFlight.add(session.executeAsync(insert(k).setIdempotent(true)).toCompletableFuture());
                if (inFlight.size() == 30) {
                    CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]))
                            .join();
                    inFlight.clear();
                }
            }
            CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]))
                    .join();
            long extra = Arrays.stream(sim.received(INSERT)).sum() - requests;
            SpeculativeExecutionStats stats = policy(session, "default").stats();
            assertThat(extra).isPositive().isLessThanOrEqualTo((long) (0.1 * requests));
            assertThat(extra).isEqualTo(stats.sent());
            assertThat(stats.budgetDenied()).isPositive();
            assertThat(stats.primaries()).isEqualTo(requests);
        }
    }

    /** hedge's two policies with their defaults (adaptive delay, 5% budget); the timer ticks every 1 ms. */
    private static UnaryOperator<ProgrammaticDriverConfigLoaderBuilder> hedgeDefaults(boolean warmUp) {
        return b -> b.withClass(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, HedgeLoadBalancingPolicy.class)
                .withClass(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, HedgeSpeculativeExecutionPolicy.class)
                .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 2)
                .withBoolean(HedgeDriverOption.WARM_UP, warmUp);
    }

    /** @return how many of {@code n} sequential idempotent inserts the slow node 0 answered */
    private static int answeredByNodeZero(CqlSession session, int n) {
        int answered = 0;
        for (int k = 0; k < n; k++) {
            ExecutionInfo info = session.execute(insert(k).setIdempotent(true)).getExecutionInfo();
            if (sim.indexOf(info.getCoordinator()) == 0) {
                answered++;
            }
        }
        return answered;
    }

    @Test
    void should_speculate_around_the_slow_node_from_the_first_requests_when_the_session_is_new() {
        // 1 s: a speculative execution sent after the warm-up delay (a few ms) wins even when a loaded
        // machine delays the fast node's answer by hundreds of milliseconds
        sim.slow(0, INSERT, 1000);
        try (CqlSession session = sim.session(hedgeDefaults(true))) {
            // answers first, from a statement node 0 answers fast: before any answer nothing is
            // known, the warm-up sends no speculative execution, and each node's first answer
            // measured its connection
            for (int k = 0; k < 10; k++) {
                session.execute(select(k).setIdempotent(true));
            }
            // no estimate yet (125 samples at the p96): the warm-up delay and the budget's 20 starting tokens.
            // A request that went first to node 0 is answered by a speculative execution elsewhere,
            // so node 0 answers none of them. 20 requests: with one speculative execution at most per
            // request, the 20 starting tokens cover every one (none denied, whatever the shuffle)
            assertThat(answeredByNodeZero(session, 20)).isZero();
            SpeculativeExecutionStats stats = policy(session, "default").stats();
            assertThat(stats.sent()).isPositive();
            assertThat(stats.budgetDenied()).isZero();
            assertThat(policy(session, "default").delayPolicy().toString()).contains("warm-up");
        }
    }

    @Test
    void should_send_no_speculative_execution_from_a_new_session_when_max_extra_load_is_zero() {
        sim.slow(0, INSERT, 100);
        try (CqlSession session = sim.session(
                hedgeDefaults(true).andThen(b -> b.withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, 0.0))::apply)) {
            for (int k = 0; k < 10; k++) {
                session.execute(select(k).setIdempotent(true));
            }
            for (int k = 0; k < 40; k++) {
                session.execute(insert(k).setIdempotent(true));
            }
            // zero means zero: no starting tokens at a ratio of 0, counted where the inserts ran
            assertThat(Arrays.stream(sim.received(INSERT)).sum()).isEqualTo(40);
            assertThat(policy(session, "default").stats().sent()).isZero();
        }
    }

    @Test
    void should_wait_on_the_slow_node_until_the_first_estimate_when_warm_up_is_off() {
        sim.slow(0, INSERT, 300);
        try (CqlSession session = sim.session(hedgeDefaults(false))) {
            // until the driver's shuffle puts a primary on node 0 (a third of the requests; 100 at most,
            // fewer than the first estimate's 125 samples): node 0 answers it, 300 ms late, unhedged
            int requests = 0;
            int answeredByNodeZero = 0;
            while (answeredByNodeZero == 0 && requests < 100) {
                answeredByNodeZero += answeredByNodeZero(session, 1);
                requests++;
            }
            assertThat(answeredByNodeZero).as("after %d requests", requests).isPositive();
            assertThat(policy(session, "default").stats().sent()).isZero();
        }
    }

    @Test
    void should_never_send_a_speculative_execution_when_the_statement_is_not_idempotent() {
        sim.slow(0, INSERT, 60);
        try (CqlSession session = sim.session(hedge(Duration.ofMillis(2), 3, 1.0))) {
            for (int k = 0; k < 15; k++) {
                session.execute(insert(k)); // the driver's default: not idempotent
            }
            assertThat(Arrays.stream(sim.received(INSERT)).sum()).isEqualTo(15);
            assertThat(policy(session, "default").stats().sent()).isZero();
            assertThat(policy(session, "default").stats().primaries()).isZero();
        }
    }

    @Test
    void should_stop_primaries_to_the_slow_node_and_resume_after_it_heals_when_ordering_is_on() throws Exception {
        sim.slow(0, INSERT, 150);
        // the system's time plus what the test skips: the retry period passes when the test says so
        AtomicLong skipped = new AtomicLong();
        HedgeLoadBalancingPolicy.ticker = () -> System.nanoTime() + skipped.get();
        try (CqlSession session = sim.session(hedge(Duration.ofMillis(20), 2, 1.0)
                .andThen(b -> b.withBoolean(HedgeDriverOption.LBP_LATENCY_AWARE, true)
                        .withInt(HedgeDriverOption.LBP_MIN_MEASUREMENTS, 3)
                        // 5x, not the default 2x: a healed node's first answers on a loaded
                        // machine can be 2 ms against its peers' 1 ms
                        .withDouble(HedgeDriverOption.LBP_EXCLUSION_THRESHOLD, 5.0)
                        .withDuration(HedgeDriverOption.LBP_RETRY_PERIOD, Duration.ofSeconds(60)))::apply)) {
            // a speculative execution firing at 20 ms tells the ordering the slow node took >= 20 ms
            for (int k = 0; k < 30; k++) {
                session.execute(insert(k).setIdempotent(true));
            }
            sim.clearLogs();
            for (int k = 0; k < 30; k++) {
                session.execute(insert(k).setIdempotent(true));
            }
            assertThat(sim.received(INSERT)[0]).isZero();

            sim.heal(0);
            // the slow node's last executions have ended (each 150 ms): nothing of it is in flight
            Node slowNode = sim.nodeOf(session, 0);
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> inFlight(session, slowNode) == 0);
            skipped.addAndGet(TimeUnit.SECONDS.toNanos(61)); // past the retry period: the node is probed again
            sim.clearLogs();
            for (int k = 0; k < 60; k++) {
                session.execute(insert(k).setIdempotent(true));
            }
            assertThat(sim.received(INSERT)[0]).isGreaterThanOrEqualTo(5);
        } finally {
            HedgeLoadBalancingPolicy.ticker = Ticker.system();
        }
    }

    /**
     * Every node answers after 5 ms; node 0 also stalls one request in five for 150 ms. Speculative
     * executions at 10 ms; the driver cancels losers, so all the ordering learns of a stall is "at
     * least 10 ms", which lifts node 0's average by a fifth, under the exclusion threshold.
     *
     * @return the requests node 0 received among 150 counted (primaries and speculative executions)
     */
    private static long requestsToANodeThatStallsAFifth(boolean ordering) {
        sim.stallShare(0, 5, 150, 5);
        sim.slow(1, SimulacronCluster.SELECT, 5);
        sim.slow(2, SimulacronCluster.SELECT, 5);
        try (CqlSession session = sim.session(hedge(Duration.ofMillis(10), 2, 1.0)
                .andThen(b -> b.withBoolean(HedgeDriverOption.LBP_LATENCY_AWARE, ordering))::apply)) {
            for (int k = 0; k < 300; k++) {
                session.execute(SimulacronCluster.select(k).setIdempotent(true));
            }
            sim.clearLogs();
            for (int k = 300; k < 450; k++) {
                session.execute(SimulacronCluster.select(k).setIdempotent(true));
            }
            return sim.received(SimulacronCluster.SELECT)[0];
        } finally {
            sim.fast();
        }
    }

    @Test
    void should_keep_primaries_off_a_node_that_stalls_a_fifth_of_its_requests_when_ordering_is_on() {
        // the share of its primaries that needed a speculative execution tells it apart
        assertThat(requestsToANodeThatStallsAFifth(true)).isLessThan(20);
    }

    @Test
    void should_keep_sending_primaries_to_a_node_that_stalls_a_fifth_of_its_requests_when_ordering_is_off() {
        // a third of 150 primaries, and speculative executions besides
        assertThat(requestsToANodeThatStallsAFifth(false)).isGreaterThanOrEqualTo(35);
    }

    @Test
    void should_raise_its_delay_when_its_budget_runs_low() {
        try (CqlSession session = sim.session(b -> b.withClass(
                        DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, HedgeLoadBalancingPolicy.class)
                .withClass(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, HedgeSpeculativeExecutionPolicy.class)
                .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 2)
                .withBoolean(HedgeDriverOption.WARM_UP, false))) { // no advance: the bucket fills from deposits only
            HedgeSpeculativeExecutionPolicy policy = policy(session, "default");
            Node node = anyNode(session);
            // every node: 97% of answers in 1-10 ms, 3% in 200 ms. The default p96 is in the fast
            // part; the p98.4 that a low budget aims at (1 - 0.04 x 0.4) is in the slow one
            for (Node n : session.getMetadata().getNodes().values()) {
                String target = io.github.hedge.cassandra.internal.Statements.target(n);
                for (int i = 0; i < 1_000; i++) {
                    long ms = i % 100 < 3 ? 200 : 1 + i % 10;
                    policy.latencyTracker().record(target, TimeUnit.MILLISECONDS.toNanos(ms));
                }
            }
            for (int i = 0; i < 2_000; i++) {
                policy.onPrimary(); // 100 tokens deposited: the bucket is full
            }
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> policy.nextExecution(node, null, insert(0), 1) > 0);
            long full = policy.nextExecution(node, null, insert(0), 1);

            while (policy.budget().tryAcquire()) {
                // spend every token
            }
            long low = policy.nextExecution(node, null, insert(0), 1);

            assertThat(full).as("delay with a full budget, ms").isBetween(1L, 20L);
            assertThat(low).as("delay with an empty budget, ms").isGreaterThanOrEqualTo(200L);
        }
    }

    /** @return the requests the driver has in flight to {@code node} */
    private static int inFlight(CqlSession session, Node node) {
        ChannelPool pool = ((InternalDriverContext) session.getContext())
                .getPoolManager()
                .getPools()
                .get(node);
        return pool == null ? 0 : pool.getInFlight();
    }

    @Test
    void should_stop_primaries_to_the_slow_node_when_each_of_its_executions_is_cut_short_under_the_threshold() {
        sim.slow(0, INSERT, 100);
        // the driver reports nothing of a cancelled loser: all the ordering learns of the slow node
        // is "at least 5 ms" when a speculative execution fires, under the exclusion threshold (10 x
        // the 1 ms floor). Five such lower bounds with no answer in between exclude it
        // (LatencyScores.LOST_IN_A_ROW); before, they were taken as latencies and the node stayed in
        try (CqlSession session = sim.session(hedge(Duration.ofMillis(5), 2, 1.0)
                .andThen(b -> b.withBoolean(HedgeDriverOption.LBP_LATENCY_AWARE, true)
                        .withDouble(HedgeDriverOption.LBP_EXCLUSION_THRESHOLD, 10.0)
                        .withDuration(HedgeDriverOption.LBP_RETRY_PERIOD, Duration.ofSeconds(60)))::apply)) {
            for (int k = 0; k < 60; k++) {
                session.execute(insert(k).setIdempotent(true));
            }
            // five primaries, and a speculative execution if a healthy primary hiccups past 5 ms
            // while node 0 is second in its plan
            assertThat(sim.received(INSERT)[0]).isLessThanOrEqualTo(7);
        }
    }

    @Test
    void should_give_each_profile_its_own_delay_and_budget_when_profiles_override_the_section() {
        sim.slow(0, INSERT, 200);
        try (CqlSession session =
                // ordering off: the shuffle keeps sending node 0 primaries, for both profiles to speculate on
                sim.session(hedge(Duration.ofMillis(60), 2, 1.0)
                        .andThen(b -> b.withBoolean(HedgeDriverOption.LBP_LATENCY_AWARE, false))
                        .andThen(b -> b.startProfile("hot")
                                .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, Duration.ofMillis(5))
                                .endProfile())::apply)) {
            assertThat(policy(session, "hot")).isNotSameAs(policy(session, "default"));
            // keys 0.. for the default profile, 1000.. for "hot": the nodes' logs tell the profiles apart
            int hot = 0;
            int plain = 0;
            for (int k = 0; k < REQUESTS_FOR_3_SLOW_PRIMARIES; k++) {
                for (String profile : List.of("default", "hot")) {
                    int key = profile.equals("hot") ? 1000 + k : k;
                    ResultSet rs =
                            session.execute(insert(key).setIdempotent(true).setExecutionProfileName(profile));
                    if (rs.getExecutionInfo().getSpeculativeExecutionCount() > 0) {
                        if (profile.equals("hot")) {
                            hot++;
                        } else {
                            plain++;
                        }
                    }
                }
            }
            assertThat(hot).isGreaterThanOrEqualTo(3);
            assertThat(plain).isGreaterThanOrEqualTo(3);
            // each profile's policy counted its own, and decided its own delay
            assertThat(policy(session, "hot").stats().sent()).isEqualTo(hot);
            assertThat(policy(session, "default").stats().sent()).isEqualTo(plain);
            Node node = anyNode(session);
            assertThat(policy(session, "hot").nextExecution(node, null, insert(0), 1))
                    .isEqualTo(5);
            assertThat(policy(session, "default").nextExecution(node, null, insert(0), 1))
                    .isEqualTo(60);
            // at the nodes: the default profile's speculative executions arrived at least about 60 ms
            // after their primaries (whole milliseconds, 5 ms of margin for the primary's own trip)
            Map<Integer, List<SimulacronCluster.Reception>> byKey = new TreeMap<>();
            for (SimulacronCluster.Reception r : sim.receptions(INSERT)) {
                byKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r);
            }
            List<Long> plainGaps = byKey.entrySet().stream()
                    .filter(e -> e.getKey() < 1000 && e.getValue().size() > 1)
                    .map(e -> e.getValue().get(1).receivedAt()
                            - e.getValue().get(0).receivedAt())
                    .collect(Collectors.toList());
            assertThat(plainGaps).hasSize(plain).allSatisfy(gap -> assertThat(gap)
                    .isGreaterThanOrEqualTo(60 - 5));
        }
    }

    @Test
    void should_keep_as_many_latency_samples_as_the_core_executor_when_the_delay_is_a_percentile() {
        try (CqlSession session = sim.session(hedgeDefaults(true))) {
            HedgeSpeculativeExecutionPolicy policy = policy(session, "default");
            // the default p96: 300 / (1 - 0.96) samples, kept up to an hour at low rates
            assertThat(policy.delayPolicy().windowSamples()).isEqualTo(7_500);
            assertThat(policy.latencyTracker().minWindowSamples()).isEqualTo(7_500);
            assertThat(policy.latencyTracker().maxWindowAge()).isEqualTo(Duration.ofHours(1));
            assertThat(policy.latencyTracker().window()).isEqualTo(Duration.ofSeconds(30));
        }
    }

    @Test
    void should_default_the_percentile_to_one_minus_0_8_times_the_budget_within_p50_and_p99_9_when_none_is_set() {
        // 1 - 0.8 * max-extra-load: 0.96 at 5%; clamped to [0.5, 0.999] at the budget's extremes
        for (double[] budgetAndPercentile : new double[][] {{0.05, 0.96}, {1.0, 0.5}, {0.0, 0.999}}) {
            try (CqlSession session = sim.session(hedgeDefaults(true)
                    .andThen(b -> b.withDouble(HedgeDriverOption.MAX_EXTRA_LOAD, budgetAndPercentile[0]))::apply)) {
                assertThat(policy(session, "default").delayPolicy())
                        .isInstanceOfSatisfying(PercentileDelay.class, d -> assertThat(d.percentile())
                                .isCloseTo(budgetAndPercentile[1], within(1e-9)));
            }
        }
    }

    @Test
    void should_warn_once_naming_the_tick_duration_when_the_delay_is_shorter_than_the_timer_tick() {
        Logger logger = (Logger) LoggerFactory.getLogger(HedgeSpeculativeExecutionPolicy.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            // the driver's default 100 ms tick and a 20 ms delay: one warning, however many requests
            try (CqlSession session =
                    sim.session(hedge(Duration.ofMillis(20), 2, 1.0)
                            .andThen(b -> b.withDuration(
                                    DefaultDriverOption.NETTY_TIMER_TICK_DURATION, Duration.ofMillis(100)))::apply)) {
                for (int k = 0; k < 10; k++) {
                    session.execute(insert(k).setIdempotent(true));
                }
            }
            assertThat(appender.list).singleElement().satisfies(e -> {
                assertThat(e.getLevel()).isEqualTo(Level.WARN);
                assertThat(e.getFormattedMessage())
                        .isEqualTo("speculative executions of profile default are due after 20 ms, but the driver's"
                                + " timer ticks every 100 ms (advanced.netty.timer.tick-duration), so they fire up"
                                + " to a tick late; set advanced.netty.timer.tick-duration = 1 ms");
            });

            // a 1 ms tick: nothing to warn about
            appender.list.clear();
            try (CqlSession session = sim.session(hedge(Duration.ofMillis(20), 2, 1.0))) {
                for (int k = 0; k < 10; k++) {
                    session.execute(insert(k).setIdempotent(true));
                }
            }
            assertThat(appender.list).isEmpty();
        } finally {
            logger.detachAppender(appender);
        }
    }

    @Test
    void should_fail_at_startup_naming_the_setting_when_an_option_is_invalid() {
        assertThatThrownBy(
                        () -> sim.session(hedge(Duration.ofMillis(10), 2, 1.5)).close())
                .hasStackTraceContaining(
                        "advanced.speculative-execution-policy.hedge.max-extra-load must be in [0, 1], was 1.5 (profile default)");
        assertThatThrownBy(() -> sim.session(b -> b.withClass(
                                DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS,
                                HedgeSpeculativeExecutionPolicy.class))
                        .close())
                .hasStackTraceContaining(
                        "basic.load-balancing-policy.class must be " + HedgeLoadBalancingPolicy.class.getName());
    }
}

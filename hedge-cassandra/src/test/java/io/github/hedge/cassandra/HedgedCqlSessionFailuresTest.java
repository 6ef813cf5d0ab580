package io.github.hedge.cassandra;

import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.alreadyExists;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.configurationError;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.functionFailure;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.invalid;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.isBootstrapping;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.noRows;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.overloaded;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.protocolError;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.readFailure;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.readTimeout;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.serverError;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.syntaxError;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.truncateError;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.unauthorized;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.unavailable;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.when;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.writeFailure;
import static com.datastax.oss.simulacron.common.stubbing.PrimeDsl.writeTimeout;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.servererrors.AlreadyExistsException;
import com.datastax.oss.driver.api.core.servererrors.FunctionFailureException;
import com.datastax.oss.driver.api.core.servererrors.InvalidConfigurationInQueryException;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.servererrors.ProtocolError;
import com.datastax.oss.driver.api.core.servererrors.ReadFailureException;
import com.datastax.oss.driver.api.core.servererrors.SyntaxError;
import com.datastax.oss.driver.api.core.servererrors.TruncateException;
import com.datastax.oss.driver.api.core.servererrors.UnauthorizedException;
import com.datastax.oss.driver.api.core.servererrors.WriteFailureException;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import com.datastax.oss.protocol.internal.request.Batch;
import com.datastax.oss.simulacron.common.codec.ConsistencyLevel;
import com.datastax.oss.simulacron.common.codec.WriteType;
import com.datastax.oss.simulacron.common.result.Result;
import com.datastax.oss.simulacron.server.BoundNode;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.event.NotHedged;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The wrapped session when attempts fail or time out, against a simulated 3-node cluster (RF 3):
 * what ends a call, what starts the next replica, counted at the nodes.
 */
class HedgedCqlSessionFailuresTest {
    private static SimulacronCluster sim;
    private static CqlSession driver;

    @BeforeAll
    static void start() {
        sim = new SimulacronCluster(3);
        driver = sim.session();
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

    /** Primes every node to answer {@code query} with {@code result}. */
    static void primeAll(String query, Result result) {
        for (BoundNode n : sim.nodes()) {
            n.prime(when(query).then(result));
        }
    }

    /** Primes every node to answer {@code query} with no rows after {@code delayMs}. */
    static void slowAll(String query, long delayMs) {
        for (BoundNode n : sim.nodes()) {
            n.prime(when(query).then(noRows()).delay(delayMs, TimeUnit.MILLISECONDS));
        }
    }

    static SimpleStatement statement(String query, int k) {
        return SimpleStatement.newInstance(query, k)
                .setRoutingKeyspace("ks")
                .setRoutingKey(TypeCodecs.INT.encode(k, ProtocolVersion.DEFAULT))
                .setIdempotent(true);
    }

    /** A configuration of the user's own: the core's default classifier (every exception retryable). */
    static HedgeConfig.Builder userConfig(Duration delay, int maxAttempts) {
        return HedgeConfig.builder()
                .delay(DelayPolicy.fixed(delay))
                .budget(HedgeBudget.unlimited())
                .maxAttempts(maxAttempts);
    }

    static HedgedCqlSession wrap(CqlSession session, HedgeConfig config) {
        return HedgedCqlSession.builder(session)
                .hedgeConfig(config)
                .latencyAware(LatencyAwareOptions.disabled())
                .build();
    }

    /**
     * The error of the one node an attempt tried: when the driver's retry policy says "next node"
     * (a truncate error, say), a pinned attempt ends in an AllNodesFailedException around it, as the
     * driver's own would around every node's.
     */
    static Throwable nodeError(Throwable thrown) {
        if (thrown instanceof AllNodesFailedException) {
            List<Throwable> errors = ((AllNodesFailedException) thrown)
                    .getAllErrors().values().stream().flatMap(List::stream).collect(Collectors.toList());
            assertThat(errors).hasSize(1);
            return errors.get(0);
        }
        return thrown;
    }

    static long total(long[] perNode) {
        return Arrays.stream(perNode).sum();
    }

    // ------------------------------------------------------------------ the request timeout

    @Test
    void should_end_at_the_request_timeout_after_one_execution_when_the_hedge_delay_exceeds_it() {
        String query = "SELECT v FROM ks.t WHERE k = ? -- timeout 1";
        slowAll(query, 1000);
        try (CqlSession timed =
                sim.session(b -> b.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofMillis(200)))) {
            HedgedCqlSession session =
                    wrap(timed, userConfig(Duration.ofSeconds(2), 3).build());

            assertThatThrownBy(() -> session.execute(statement(query, 1)))
                    .isInstanceOf(DriverTimeoutException.class)
                    .hasMessage("Query timed out after PT0.2S");

            await().atMost(Duration.ofSeconds(5)).until(() -> total(sim.received(query)) >= 1);
            assertThat(total(sim.received(query))).isEqualTo(1);
            assertThat(session.executor().stats().hedgesSent()).isZero();
        }
    }

    @Test
    void should_hedge_only_within_the_statement_timeout_and_end_at_it_when_every_replica_is_slow() throws Exception {
        String query = "SELECT v FROM ks.t WHERE k = ? -- timeout 2";
        slowAll(query, 1500);
        // a 200 ms hedge delay inside a 300 ms timeout: one hedge fits, the third replica's does not
        HedgedCqlSession session =
                wrap(driver, userConfig(Duration.ofMillis(200), 3).build());

        CompletableFuture<?> call = session.executeAsync(statement(query, 2).setTimeout(Duration.ofMillis(300)))
                .toCompletableFuture();

        assertThatThrownBy(() -> call.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(DriverTimeoutException.class)
                .hasMessage("Query timed out after PT0.3S");
        assertThat(total(sim.received(query))).isEqualTo(2);
        assertThat(Arrays.stream(sim.received(query)).max().getAsLong()).isEqualTo(1); // two replicas, once each
        assertThat(session.executor().stats().hedgesSent()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ driver errors

    /** An error every replica answers: the call ends with it after one execution, whatever the user's classifier. */
    static Stream<Arguments> errorsThatEndTheCall() {
        return Stream.of(
                Arguments.of(invalid("no such column"), InvalidQueryException.class),
                Arguments.of(syntaxError("line 1:0 no viable alternative"), SyntaxError.class),
                Arguments.of(unauthorized("no SELECT permission"), UnauthorizedException.class),
                Arguments.of(alreadyExists("ks", "t"), AlreadyExistsException.class),
                Arguments.of(configurationError("bad option"), InvalidConfigurationInQueryException.class),
                Arguments.of(
                        functionFailure("ks", "f", List.of("int"), "the function threw"),
                        FunctionFailureException.class),
                Arguments.of(protocolError("bad frame"), ProtocolError.class),
                Arguments.of(readFailure(ConsistencyLevel.ONE, 0, 1, Map.of(), false), ReadFailureException.class),
                Arguments.of(
                        writeFailure(ConsistencyLevel.ONE, 0, 1, Map.of(), WriteType.SIMPLE),
                        WriteFailureException.class),
                Arguments.of(truncateError("truncate failed"), TruncateException.class));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("errorsThatEndTheCall")
    void should_end_the_call_after_one_execution_when_the_error_fails_on_every_replica_and_the_config_is_the_user_s(
            Result result, Class<? extends Throwable> expected) {
        String query = "SELECT v FROM ks.t WHERE k = ? -- " + expected.getSimpleName();
        primeAll(query, result);
        // the user's configuration: the core's default classifier would retry every exception
        HedgedCqlSession session =
                wrap(driver, userConfig(Duration.ofSeconds(2), 3).build());

        Throwable thrown = catchThrowable(() -> session.execute(statement(query, 3)));

        assertThat(nodeError(thrown)).isInstanceOf(expected);

        assertThat(total(sim.received(query))).isEqualTo(1);
        assertThat(session.executor().stats().hedgesSent()).isZero();
    }

    /** An error of one replica (or one coordinator's view): the next replica is tried at once. */
    static Stream<Arguments> errorsThatTryTheNextReplica() {
        return Stream.of(
                Arguments.of(unavailable(ConsistencyLevel.ONE, 1, 0), "unavailable"),
                Arguments.of(overloaded("too busy"), "overloaded"),
                Arguments.of(isBootstrapping(), "bootstrapping"),
                Arguments.of(serverError("a bug"), "server error"),
                Arguments.of(readTimeout(ConsistencyLevel.ONE, 0, 1, false), "read timeout"),
                Arguments.of(writeTimeout(ConsistencyLevel.ONE, 0, 1, WriteType.SIMPLE), "write timeout"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("errorsThatTryTheNextReplica")
    void should_try_each_replica_once_at_once_when_the_error_is_one_replica_s(Result result, String name) {
        String query = "SELECT v FROM ks.t WHERE k = ? -- " + name;
        primeAll(query, result);
        // a 2 s delay: every further attempt is a retry after a failure, not a hedge
        HedgedCqlSession session =
                wrap(driver, userConfig(Duration.ofSeconds(2), 3).build());

        assertThatThrownBy(() -> session.execute(statement(query, 4))).isInstanceOf(DriverException.class);

        assertThat(sim.received(query)).containsExactly(1, 1, 1);
        assertThat(session.executor().stats().hedgesSent()).isEqualTo(2);
    }

    // ------------------------------------------------------------------ the caller, the session

    @Test
    void should_send_no_further_attempt_when_the_caller_cancels_the_call() throws Exception {
        String query = "SELECT v FROM ks.t WHERE k = ? -- cancelled";
        slowAll(query, 1000);
        HedgedCqlSession session =
                wrap(driver, userConfig(Duration.ofMillis(300), 3).build());

        CompletableFuture<AsyncResultSet> call =
                session.executeAsync(statement(query, 5)).toCompletableFuture();
        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(1))
                .until(() -> total(sim.received(query)) == 1);
        assertThat(call.cancel(true)).isTrue();

        // past the two hedges' 300 and 600 ms, had the call gone on
        Thread.sleep(700);
        assertThat(total(sim.received(query))).isEqualTo(1);
        assertThat(session.executor().stats().hedgesSent()).isZero();
        assertThat(session.executor().stats().cancelled()).isEqualTo(1);
    }

    @Test
    void should_answer_every_call_in_flight_from_its_running_attempts_when_the_session_closes() throws Exception {
        String query = "SELECT v FROM ks.t WHERE k = ? -- closing";
        slowAll(query, 400);
        CqlSession own = sim.session();
        // the hedges are due at 150 ms, after the close: they cannot go out, the primaries still answer
        HedgedCqlSession session =
                wrap(own, userConfig(Duration.ofMillis(150), 3).build());
        List<NotHedged> notHedged = new java.util.concurrent.CopyOnWriteArrayList<>();
        session.executor().events().subscribe(NotHedged.class, notHedged::add);
        List<CompletableFuture<AsyncResultSet>> calls = new ArrayList<>();
        for (int k = 0; k < 10; k++) {
            calls.add(session.executeAsync(statement(query, k)).toCompletableFuture());
        }
        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(1))
                .until(() -> total(sim.received(query)) >= 10);

        CompletableFuture<Void> closed = session.closeAsync().toCompletableFuture();

        // a graceful close lets requests in flight finish: every call is answered by its primary,
        // although its hedges fail at once on the closing session
        for (CompletableFuture<AsyncResultSet> call : calls) {
            assertThat(call).succeedsWithin(Duration.ofSeconds(10));
        }
        assertThat(closed).succeedsWithin(Duration.ofSeconds(10));
        assertThat(session.executor().stats().successes()).isEqualTo(10);
        assertThat(session.executor().stats().pendingAttempts()).isZero();
        // each call's further attempts were stopped because the session is closing, and say so
        assertThat(notHedged).extracting(NotHedged::reason).containsOnly(NotHedged.Reason.CLIENT_CLOSING);
        assertThat(notHedged)
                .extracting(NotHedged::callId)
                .doesNotHaveDuplicates()
                .hasSize(10);
    }

    @Test
    void should_end_every_call_in_flight_when_the_session_is_force_closed() throws Exception {
        String query = "SELECT v FROM ks.t WHERE k = ? -- force closing";
        slowAll(query, 3000);
        CqlSession own = sim.session();
        // the hedges are due at 600 ms, after the close even on a loaded machine
        HedgedCqlSession session =
                wrap(own, userConfig(Duration.ofMillis(600), 3).build());
        List<CompletableFuture<AsyncResultSet>> calls = new ArrayList<>();
        for (int k = 0; k < 10; k++) {
            calls.add(session.executeAsync(statement(query, k)).toCompletableFuture());
        }
        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(1))
                .until(() -> total(sim.received(query)) >= 10);

        session.forceCloseAsync().toCompletableFuture().get(10, TimeUnit.SECONDS);

        for (CompletableFuture<AsyncResultSet> call : calls) {
            assertThat(call).failsWithin(Duration.ofSeconds(10));
        }
        // a forced close fails the requests in flight, and no hedge went out after it (past the
        // hedges' due time)
        Thread.sleep(800);
        assertThat(total(sim.received(query))).isEqualTo(10);
        assertThat(session.executor().stats().failures()).isEqualTo(10);
    }

    @Test
    void should_send_one_execution_per_attempt_when_the_driver_profile_speculates_too() {
        String query = "SELECT v FROM ks.t WHERE k = ? -- driver specex";
        sim.node(0).prime(when(query).then(noRows()).delay(200, TimeUnit.MILLISECONDS));
        sim.node(1).prime(when(query).then(noRows()));
        sim.node(2).prime(when(query).then(noRows()));
        try (CqlSession speculating = sim.session(b -> b.withString(
                        DefaultDriverOption.SPECULATIVE_EXECUTION_POLICY_CLASS, "ConstantSpeculativeExecutionPolicy")
                .withInt(DefaultDriverOption.SPECULATIVE_EXECUTION_MAX, 3)
                .withDuration(DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY, Duration.ofMillis(10)))) {
            // hedge's delay is 2 s: any second execution would be the driver's
            HedgedCqlSession session =
                    wrap(speculating, userConfig(Duration.ofSeconds(2), 3).build());
            for (int k = 0; k < 15; k++) {
                session.execute(statement(query, k));
            }
            assertThat(total(sim.received(query))).isEqualTo(15);
        }
    }

    // ------------------------------------------------------------------ idempotence

    @Test
    void should_hedge_undeclared_statements_when_the_profile_makes_them_idempotent_but_never_one_declared_not() {
        String insert = "INSERT INTO ks.t (k, v) VALUES (?, 1) -- default idempotence";
        for (BoundNode n : sim.nodes()) {
            n.prime(when(insert).then(noRows()).delay(100, TimeUnit.MILLISECONDS));
        }
        try (CqlSession idempotentByDefault =
                sim.session(b -> b.withBoolean(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE, true))) {
            HedgedCqlSession session = wrap(
                    idempotentByDefault, userConfig(Duration.ofMillis(10), 2).build());
            for (int k = 0; k < 5; k++) {
                SimpleStatement undeclared = SimpleStatement.newInstance(insert, k)
                        .setRoutingKeyspace("ks")
                        .setRoutingKey(TypeCodecs.INT.encode(k, ProtocolVersion.DEFAULT));
                session.execute(undeclared); // idempotent by the profile: hedged
            }
            assertThat(total(sim.received(insert))).isEqualTo(10); // every node 100 ms late: 5 primaries, 5 hedges
            sim.clearLogs();
            for (int k = 0; k < 5; k++) {
                session.execute(statement(insert, k).setIdempotent(false)); // the statement's own word wins
            }
            assertThat(total(sim.received(insert))).isEqualTo(5);
            assertThat(session.executor().stats().notHedgedNonIdempotent()).isEqualTo(5);
        }
    }

    @Test
    void should_run_a_batch_once_when_it_is_not_declared_idempotent() {
        HedgedCqlSession session =
                wrap(driver, userConfig(Duration.ofMillis(1), 3).build());
        BatchStatement batch = BatchStatement.newInstance(
                DefaultBatchType.LOGGED, SimulacronCluster.insert(1), SimulacronCluster.insert(2));

        session.execute(batch);

        assertThat(batches()).isEqualTo(1);
        assertThat(session.executor().stats().notHedgedNonIdempotent()).isEqualTo(1);
        assertThat(session.executor().stats().hedgesSent()).isZero();
    }

    /** @return BATCH messages the nodes received */
    private static long batches() {
        return sim.nodes().stream()
                .mapToLong(n -> n.getLogs().getQueryLogs().stream()
                        .filter(l -> l.getFrame().message instanceof Batch)
                        .count())
                .sum();
    }
}

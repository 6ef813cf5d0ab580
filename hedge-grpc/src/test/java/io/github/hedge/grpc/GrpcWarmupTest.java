package io.github.hedge.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.DelayContext;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.PercentileDelay;
import io.github.hedge.grpc.Backends.Action;
import io.github.hedge.grpc.Backends.Execution;
import io.github.hedge.grpc.test.EchoGrpc;
import io.github.hedge.grpc.test.EchoReply;
import io.github.hedge.grpc.test.EchoRequest;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The interceptor's cold start against three real grpc-netty backends on 127.0.0.1: a new
 * interceptor, before its percentile has an estimate, with the default configuration and with
 * configurations of the user's own.
 */
@Timeout(120) // a hung call fails the test instead of the build
class GrpcWarmupTest {
    static final String GET = "hedge.test.Echo/Get";
    static final String APPEND = "hedge.test.Echo/Append";

    static Backends backends;
    final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeAll
    static void startBackends() throws Exception {
        backends = new Backends(3);
    }

    @AfterAll
    static void stopBackends() {
        backends.close();
    }

    @BeforeEach
    void reset() {
        backends.reset();
    }

    @AfterEach
    void closeChannels() throws InterruptedException {
        Backends.shutdown(channels);
        backends.reset();
    }

    /**
     * A new channel with the hedge balancer, connected to the three backends by calls that do not go
     * through the interceptor, and the interceptor in front of it: the interceptor has measured
     * nothing, its budget is as built. (Connecting first keeps the transport's own start, which
     * neither mode controls, out of what is checked.)
     */
    EchoGrpc.EchoBlockingStub fresh(HedgingClientInterceptor hedging) {
        ManagedChannel ch = NettyChannelBuilder.forTarget(backends.target())
                .usePlaintext()
                .defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME)
                .build();
        channels.add(ch);
        Backends.Behaviour behaviour = backends.behaviour();
        backends.behave((b, m, r, a) -> Action.reply(0));
        EchoGrpc.EchoBlockingStub raw = EchoGrpc.newBlockingStub(ch);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 200 && seen.size() < 3; i++) {
            seen.add(raw.get(req("connect")).getBackend());
        }
        assertThat(seen).hasSize(3);
        backends.behave(behaviour);
        backends.executions.clear();
        Channel intercepted = ClientInterceptors.intercept(ch, hedging);
        return EchoGrpc.newBlockingStub(intercepted);
    }

    static EchoRequest req(String text) {
        return EchoRequest.newBuilder().setText(text).build();
    }

    static Execution primary(String text) {
        return backends.executions(text).stream()
                .filter(e -> e.attempt == 1)
                .findFirst()
                .orElseThrow();
    }

    // ------------------------------------------------------------------------------------------

    @Test
    void should_hedge_its_first_calls_around_the_slow_backend_when_the_interceptor_is_new() throws Exception {
        // the first calls are answered fast wherever they go: nothing is hedged before an answer is
        // known, and each backend's first answer measured its connection, not the backend
        backends.behave((b, m, r, a) -> Action.reply(b == 0 && !r.getText().startsWith("first") ? 1_000 : 1));
        HedgingClientInterceptor hedging = HedgingClientInterceptor.ofDefaults();
        EchoGrpc.EchoBlockingStub stub = fresh(hedging);
        for (int i = 0; i < 6; i++) {
            stub.get(req("first-" + i));
        }
        backends.executions.clear(); // what the cold calls did, below

        // far fewer than the 125 samples of the first estimate, and no more than the budget's 20
        // starting tokens: with at most one hedge per call, no hedge can be denied
        int calls = 20;
        List<EchoReply> replies = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            replies.add(stub.get(req("cold-" + i)));
        }

        HedgedExecutor executor = hedging.executor(GET).orElseThrow();
        assertThat(executor.latencyTracker().sampleCount())
                .as("the percentile has no estimate yet")
                .isLessThan(100);
        // no call waited for the slow backend: none was answered there
        assertThat(replies).noneMatch(r -> r.getBackend().equals("b0"));
        List<Integer> slowPrimaries = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            if (primary("cold-" + i).backend == 0) {
                slowPrimaries.add(i);
            }
        }
        assertThat(slowPrimaries)
                .as("round robin sends the slow backend some primaries")
                .isNotEmpty();
        // every primary there was won by a hedge on another backend
        for (int i : slowPrimaries) {
            assertThat(replies.get(i).getAttempt()).as("call %d", i).isEqualTo(2);
        }
        HedgeStats stats = executor.stats();
        assertThat(stats.hedgesWon()).isGreaterThanOrEqualTo(slowPrimaries.size());
        assertThat(stats.budgetDenied()).isZero();
        assertThat(hedging.budget().initialTokens()).isEqualTo(HedgeBudget.coldStartTokens(0.05));
        await().atMost(GrpcHedgingTest.SERVER_WAIT).untilAsserted(() -> assertThat(backends.executions)
                .as("the slow backend sees every attempt cancelled")
                .filteredOn(e -> e.backend == 0)
                .allMatch(e -> e.cancelled));
        assertThat(backends.executions).filteredOn(e -> e.backend == 0).noneMatch(e -> e.answered);
    }

    @Test
    void should_wait_for_the_slow_backend_when_the_delay_has_no_warm_up() throws Exception {
        backends.behave((b, m, r, a) -> Action.reply(b == 0 ? 300 : 1));
        HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                .defaults(HedgeConfig.from(HedgingClientInterceptor.DEFAULT_CONFIG)
                        .delay(DelayPolicy.percentile(0.96)
                                .fallback(DelayPolicy.never())
                                .build())
                        .build())
                .build();
        EchoGrpc.EchoBlockingStub stub = fresh(hedging);

        List<EchoReply> replies = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            replies.add(stub.get(req("off-" + i)));
        }

        assertThat(hedging.executor(GET).orElseThrow().stats().hedgesSent()).isZero();
        assertThat(replies)
                .as("the primaries sent to the slow backend waited for it")
                .anyMatch(r -> r.getBackend().equals("b0"));
    }

    @Test
    void should_stop_warming_up_when_the_percentile_has_its_first_estimate() throws Exception {
        // a warm-up delay no call reaches, to tell it from the percentile
        Duration warmupDelay = Duration.ofSeconds(30);
        HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                .defaults(HedgeConfig.from(HedgingClientInterceptor.DEFAULT_CONFIG)
                        .delay(DelayPolicy.percentile(0.96)
                                .fallback(DelayPolicy.fixed(warmupDelay))
                                .build())
                        .build())
                .build();
        EchoGrpc.EchoBlockingStub stub = fresh(hedging);
        stub.get(req("first"));
        HedgedExecutor executor = hedging.executor(GET).orElseThrow();
        assertThat(executor.currentDelayNanos()).isEqualTo(warmupDelay.toNanos());

        // the tracker publishes its estimate at its next refresh after 125 samples of one backend
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int calls = 0;
        while (executor.currentDelayNanos() == warmupDelay.toNanos()) {
            assertThat(System.nanoTime())
                    .as("no estimate after %d calls", calls)
                    .isLessThan(end);
            stub.get(req("warm-" + calls++));
        }

        assertThat(calls).isGreaterThanOrEqualTo(124);
        // the delay is now the p96 itself, as a PercentileDelay computes it
        PercentileDelay p96 = DelayPolicy.percentile(0.96).build();
        DelayContext ctx = DelayContext.of(2, List.of(), executor.latencyTracker());
        long before = p96.delayNanos(ctx);
        long delay = executor.currentDelayNanos();
        long after = p96.delayNanos(ctx);
        assertThat(delay).isIn(before, after).isLessThan(warmupDelay.toNanos());
    }

    @Test
    void should_never_hedge_a_non_idempotent_method_when_warming_up() throws Exception {
        // the scenario in which the idempotent GET above is hedged after the warm-up delay (4 ms here)
        backends.behave((b, m, r, a) -> Action.reply(b == 0 ? 1_000 : 1));
        HedgingClientInterceptor hedging = HedgingClientInterceptor.ofDefaults();
        EchoGrpc.EchoBlockingStub stub = fresh(hedging);

        for (int i = 0; i < 6; i++) {
            stub.append(req("once-" + i));
        }

        HedgedExecutor executor = hedging.executor(APPEND).orElseThrow();
        assertThat(executor.currentDelayNanos())
                .as("the warm-up delay is there, so only idempotence stops a hedge")
                .isPositive()
                .isLessThan(TimeUnit.SECONDS.toNanos(1));
        assertThat(backends.executions)
                .as("round robin sent some calls to the slow backend, each waited 1 s there")
                .anyMatch(e -> e.backend == 0);
        assertThat(backends.executions).hasSize(6);
        assertThat(backends.executions).allMatch(e -> e.attempt == 1 && !e.cancelled);
        assertThat(executor.stats().hedgesSent()).isZero();
    }

    @Test
    void should_warm_up_a_supplied_percentile_and_keep_a_supplied_budget_when_the_defaults_are_replaced()
            throws Exception {
        HedgeBudget shared = HedgeBudget.builder().ratio(0.05).build();
        HedgingClientInterceptor own = HedgingClientInterceptor.builder()
                .defaults(HedgeConfig.builder()
                        .delay(DelayPolicy.percentile(0.9).build())
                        .budget(shared)
                        .build())
                .build();
        EchoGrpc.EchoBlockingStub ownStub = fresh(own);
        for (int i = 0; i < 6; i++) { // a second answer of some backend: its first measured the connection
            ownStub.get(req("own-" + i));
        }

        assertThat(own.budget()).isSameAs(shared);
        assertThat(own.budget().initialTokens()).isZero();
        HedgedExecutor ownGet = own.executor(GET).orElseThrow();
        // the core's warm-up bound, as for the default delay: hedging from the first answer on
        await().atMost(GrpcHedgingTest.SERVER_WAIT)
                .untilAsserted(() -> assertThat(ownGet.currentDelayNanos()).isPositive());
    }
}

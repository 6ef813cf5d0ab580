package io.github.hedge.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.observation.HedgeObservations;
import io.github.hedge.grpc.Backends.Action;
import io.github.hedge.grpc.test.EchoGrpc;
import io.github.hedge.grpc.test.EchoRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Observations of hedged gRPC calls on real servers on loopback. */
@Timeout(120)
class GrpcObservationTest {
    /** Records the observations started and stopped. */
    private static final class Recorder implements ObservationHandler<Observation.Context> {
        final Queue<Observation.Context> started = new ConcurrentLinkedQueue<>();
        final Set<Observation.Context> stopped = ConcurrentHashMap.newKeySet();

        @Override
        public void onStart(Observation.Context context) {
            started.add(context);
        }

        @Override
        public void onStop(Observation.Context context) {
            stopped.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        List<Observation.Context> named(String name) {
            return started.stream().filter(c -> name.equals(c.getName())).toList();
        }
    }

    /** Stands for client instrumentation beneath hedging: notes the current observation of each ClientCall. */
    private static final class Beneath implements ClientInterceptor {
        final ObservationRegistry registry;
        final Queue<Optional<Observation>> current = new ConcurrentLinkedQueue<>();

        Beneath(ObservationRegistry registry) {
            this.registry = registry;
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            current.add(Optional.ofNullable(registry.getCurrentObservation()));
            return next.newCall(method, options);
        }
    }

    private static String key(Observation.Context c, String key) {
        var kv = c.getLowCardinalityKeyValue(key);
        return kv == null ? null : kv.getValue();
    }

    @Test
    void
            should_record_the_call_and_its_attempts_with_the_winner_and_nest_client_calls_under_attempts_when_a_hedge_wins()
                    throws Exception {
        ObservationRegistry registry = ObservationRegistry.create();
        Recorder recorded = new Recorder();
        registry.observationConfig().observationHandler(recorded);
        Beneath beneath = new Beneath(registry);
        try (Backends backends = new Backends(3)) {
            backends.behave((b, m, r, a) -> Action.reply(a == 1 ? 5_000 : 1));
            HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                    .defaults(HedgeConfig.builder()
                            .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                            .budget(HedgeBudget.unlimited())
                            .callDecorator(HedgeObservations.of(registry))
                            .build())
                    .build();
            ManagedChannel ch = NettyChannelBuilder.forTarget(backends.target())
                    .usePlaintext()
                    .defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME)
                    .intercept(beneath, hedging) // hedging runs first, beneath for each attempt
                    .build();
            try {
                int attempt = EchoGrpc.newBlockingStub(ch)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .get(EchoRequest.newBuilder().setText("user-secret-42").build())
                        .getAttempt();
                assertThat(attempt).isEqualTo(2);
                // the server saw the losing primary cancelled
                await().atMost(GrpcHedgingTest.SERVER_WAIT)
                        .untilAsserted(() -> assertThat(backends.executions("user-secret-42"))
                                .filteredOn(e -> e.attempt == 1)
                                .singleElement()
                                .satisfies(e -> assertThat(e.cancelled).isTrue()));
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }

        List<Observation.Context> calls = recorded.named(HedgeObservations.CALL_NAME);
        assertThat(calls).hasSize(1);
        Observation.Context call = calls.get(0);
        assertThat(key(call, "hedge.executor")).isEqualTo("hedge.test.Echo/Get");
        assertThat(key(call, "hedge.winner")).isEqualTo("2");
        List<Observation.Context> attempts = recorded.named(HedgeObservations.ATTEMPT_NAME);
        assertThat(attempts).hasSize(2).allSatisfy(a -> assertThat(
                        a.getParentObservation().getContextView())
                .isSameAs(call));
        assertThat(attempts)
                .extracting(a -> key(a, "hedge.attempt") + ":" + key(a, "hedge.outcome"))
                .containsExactlyInAnyOrder("1:lost-cancelled", "2:won");
        assertThat(beneath.current)
                .hasSize(2)
                .extracting(o -> o.map(Observation::getContextView).orElse(null))
                .containsExactlyInAnyOrderElementsOf(attempts);
        assertThat(recorded.stopped).containsAll(recorded.started);
        for (Observation.Context c : recorded.started) {
            assertThat(c.getAllKeyValues())
                    .noneMatch(kv ->
                            kv.getValue().contains("secret") || kv.getValue().contains("127.0.0.1"));
        }
    }
}

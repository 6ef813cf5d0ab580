package io.github.hedge.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.grpc.Backends.Action;
import io.github.hedge.grpc.test.EchoGrpc;
import io.github.hedge.grpc.test.EchoRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The standard {@code grpc-previous-rpc-attempts} header, as real servers on loopback read it. */
@Timeout(120)
class StandardAttemptHeaderTest {
    /** Records, at the server, both attempt headers of every request as they arrived. */
    private static final class HeaderRecorder implements ServerInterceptor {
        final List<String> seen = new CopyOnWriteArrayList<>();

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            seen.add("hedge-attempt=" + headers.get(HedgeHeaders.ATTEMPT) + " grpc-previous-rpc-attempts="
                    + headers.get(HedgeHeaders.PREVIOUS_RPC_ATTEMPTS));
            return next.startCall(call, headers);
        }
    }

    @Test
    void should_send_the_number_of_previous_attempts_on_each_hedge_and_nothing_on_the_primary_when_hedging()
            throws Exception {
        HeaderRecorder recorder = new HeaderRecorder();
        try (Backends backends = new Backends(3, recorder)) {
            // the primary and the first hedge are slow, the second hedge answers
            backends.behave((b, m, r, a) -> Action.reply(a < 3 ? 300 : 1));
            HedgingClientInterceptor hedging = HedgingClientInterceptor.builder()
                    .defaults(HedgeConfig.builder()
                            .maxAttempts(3)
                            .delay(DelayPolicy.fixed(Duration.ofMillis(20)))
                            .budget(HedgeBudget.unlimited())
                            .build())
                    .build();
            ManagedChannel ch = NettyChannelBuilder.forTarget(backends.target())
                    .usePlaintext()
                    .defaultLoadBalancingPolicy(HedgeLoadBalancerProvider.POLICY_NAME)
                    .intercept(hedging)
                    .build();
            try {
                int attempt = EchoGrpc.newBlockingStub(ch)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .get(EchoRequest.newBuilder().setText("h").build())
                        .getAttempt();

                assertThat(attempt).isEqualTo(3);
                // the servers may see them in any order (connections are set up on first use)
                assertThat(recorder.seen)
                        .containsExactlyInAnyOrder(
                                "hedge-attempt=null grpc-previous-rpc-attempts=null",
                                "hedge-attempt=2 grpc-previous-rpc-attempts=1",
                                "hedge-attempt=3 grpc-previous-rpc-attempts=2");
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void should_shed_a_hedge_marked_only_by_the_standard_header_when_the_server_is_at_its_hedge_limit()
            throws Exception {
        HedgeSheddingServerInterceptor shedding = HedgeSheddingServerInterceptor.maxConcurrentHedges(0);
        try (Backends backends = new Backends(1, shedding)) {
            ManagedChannel ch = NettyChannelBuilder.forTarget(backends.target())
                    .usePlaintext()
                    .build();
            try {
                // a primary: answered
                assertThat(EchoGrpc.newBlockingStub(ch)
                                .withDeadlineAfter(10, TimeUnit.SECONDS)
                                .get(EchoRequest.newBuilder().setText("p").build())
                                .getAttempt())
                        .isEqualTo(1);
                // a hedge as another client sends it: only grpc-previous-rpc-attempts, and shed
                Metadata standard = new Metadata();
                standard.put(HedgeHeaders.PREVIOUS_RPC_ATTEMPTS, "1");
                EchoGrpc.EchoBlockingStub hedge = EchoGrpc.newBlockingStub(ch)
                        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(standard))
                        .withDeadlineAfter(300, TimeUnit.MILLISECONDS);
                assertThatThrownBy(() ->
                                hedge.get(EchoRequest.newBuilder().setText("s").build()))
                        .isInstanceOfSatisfying(
                                StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));

                assertThat(shedding.shedCount()).isEqualTo(1);
                assertThat(backends.executions).extracting(e -> e.text).containsExactly("p");
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void should_read_the_attempt_number_from_either_header_when_a_server_gets_one() {
        Metadata none = new Metadata();
        Metadata standard = new Metadata();
        standard.put(HedgeHeaders.PREVIOUS_RPC_ATTEMPTS, "2");
        Metadata both = new Metadata();
        both.put(HedgeHeaders.ATTEMPT, "4");
        both.put(HedgeHeaders.PREVIOUS_RPC_ATTEMPTS, "1");
        Metadata bad = new Metadata();
        bad.put(HedgeHeaders.PREVIOUS_RPC_ATTEMPTS, "-3");

        assertThat(HedgeHeaders.attemptNumber(none)).isEqualTo(1);
        assertThat(HedgeHeaders.attemptNumber(standard)).isEqualTo(3);
        assertThat(HedgeHeaders.attemptNumber(both)).isEqualTo(4);
        assertThat(HedgeHeaders.attemptNumber(bad)).isEqualTo(1);
        assertThat(HedgeHeaders.isHedge(standard)).isTrue();
    }
}

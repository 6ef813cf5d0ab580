package io.github.hedge.core.observation;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The spans a tracer gets through Micrometer Tracing's observation handler (the test tracer). */
class HedgeTracingTest {
    @Test
    void should_export_the_attempt_spans_as_children_of_the_call_span_with_the_winner_marked_when_a_hedge_wins() {
        SimpleTracer tracer = new SimpleTracer();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = executor(registry, time);
        List<CompletableFuture<String>> attempts = new CopyOnWriteArrayList<>();
        Map<Integer, Optional<Span>> currentSpan = new ConcurrentHashMap<>();

        CompletableFuture<String> call =
                ex.executeAsync(CallOptions.builder().operation("getUser").build(), ctx -> {
                    // what a client's own tracing would take as its parent
                    currentSpan.put(ctx.attemptNumber(), Optional.ofNullable(tracer.currentSpan()));
                    CompletableFuture<String> f = new CompletableFuture<>();
                    attempts.add(f);
                    return f;
                });
        time.advance(Duration.ofMillis(10));
        attempts.get(1).complete("user");

        assertThat(call).isCompletedWithValue("user");
        List<SimpleSpan> spans = List.copyOf(tracer.getSpans());
        assertThat(spans).hasSize(3).allSatisfy(s -> assertThat(s.getEndTimestamp())
                .isNotNull());
        // Micrometer Tracing writes span names in kebab case: getUser becomes get-user
        SimpleSpan callSpan = spans.stream()
                .filter(s -> s.getName().equals("users get-user"))
                .findFirst()
                .orElseThrow();
        assertThat(callSpan.getTags()).containsEntry("hedge.winner", "2").containsEntry("hedge.outcome", "success");
        SimpleSpan primary = span(spans, "users get-user attempt 1");
        SimpleSpan hedge = span(spans, "users get-user attempt 2");
        for (SimpleSpan a : List.of(primary, hedge)) {
            assertThat(a.getParentId()).isEqualTo(callSpan.getSpanId());
            assertThat(a.getTraceId()).isEqualTo(callSpan.getTraceId());
        }
        assertThat(primary.getTags()).containsEntry("hedge.outcome", "lost-cancelled");
        assertThat(hedge.getTags())
                .containsEntry("hedge.outcome", "won")
                .containsEntry("hedge.reason", "delay-elapsed");
        assertThat(currentSpan.get(1).orElseThrow().context().spanId()).isEqualTo(primary.getSpanId());
        assertThat(currentSpan.get(2).orElseThrow().context().spanId()).isEqualTo(hedge.getSpanId());
        assertThat(tracer.currentSpan()).isNull();
    }

    @Test
    void should_parent_every_attempt_span_on_the_call_span_when_the_caller_has_a_span_in_scope() {
        SimpleTracer tracer = new SimpleTracer();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
        VirtualTimeScheduler time = new VirtualTimeScheduler();
        HedgedExecutor ex = executor(registry, time);
        List<CompletableFuture<String>> attempts = new CopyOnWriteArrayList<>();
        // the caller's own span (a server request's, say) is current on the primary's thread
        io.micrometer.observation.Observation request =
                io.micrometer.observation.Observation.start("http.server.requests", registry);
        CompletableFuture<String> call;
        try (io.micrometer.observation.Observation.Scope ignored = request.openScope()) {
            call = ex.executeAsync(CallOptions.builder().operation("getUser").build(), ctx -> {
                CompletableFuture<String> f = new CompletableFuture<>();
                attempts.add(f);
                return f;
            });
        }
        time.advance(Duration.ofMillis(10));
        attempts.get(0).complete("user");
        request.stop();

        assertThat(call).isCompletedWithValue("user");
        List<SimpleSpan> spans = List.copyOf(tracer.getSpans());
        SimpleSpan server = span(spans, "http.server.requests");
        SimpleSpan callSpan = span(spans, "users get-user");
        assertThat(callSpan.getParentId()).isEqualTo(server.getSpanId());
        assertThat(span(spans, "users get-user attempt 1").getParentId()).isEqualTo(callSpan.getSpanId());
        assertThat(span(spans, "users get-user attempt 2").getParentId()).isEqualTo(callSpan.getSpanId());
        assertThat(tracer.currentSpan()).isNull();
    }

    /** An executor that hedges after 10 ms with no budget limit, observed through {@code registry}. */
    private static HedgedExecutor executor(ObservationRegistry registry, VirtualTimeScheduler time) {
        return HedgedExecutor.of(
                "users",
                HedgeConfig.builder()
                        .ticker(time)
                        .scheduler(time)
                        .idempotentByDefault(true)
                        .budget(HedgeBudget.unlimited())
                        .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                        .callDecorator(HedgeObservations.of(registry))
                        .build());
    }

    private static SimpleSpan span(List<SimpleSpan> spans, String name) {
        return spans.stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow();
    }
}

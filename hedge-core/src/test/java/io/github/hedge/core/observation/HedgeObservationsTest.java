package io.github.hedge.core.observation;

import static io.github.hedge.core.observation.RecordingHandler.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.AttemptFunction;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The observations of real executors in virtual time, recorded by Micrometer's test registry. */
class HedgeObservationsTest {
    private static final long MS = 1_000_000L;

    private VirtualTimeScheduler time;
    private TestObservationRegistry registry;
    private RecordingHandler recorded;

    @BeforeEach
    void setUp() {
        time = new VirtualTimeScheduler();
        registry = TestObservationRegistry.create();
        recorded = new RecordingHandler();
        registry.observationConfig().observationHandler(recorded);
    }

    private HedgeConfig.Builder config(HedgeObservations observations) {
        return HedgeConfig.builder()
                .ticker(time)
                .scheduler(time)
                .idempotentByDefault(true)
                .maxAttempts(3)
                .budget(HedgeBudget.unlimited())
                .delay(DelayPolicy.fixed(Duration.ofMillis(10)))
                .callDecorator(observations);
    }

    /** Attempts that answer only when the test completes their futures; records each one's current observation. */
    private static final class Attempts implements AttemptFunction<String> {
        final ObservationRegistry registry;
        final List<CompletableFuture<String>> futures = new ArrayList<>();
        final Map<Integer, Observation> currentAtStart = new ConcurrentHashMap<>();

        Attempts(ObservationRegistry registry) {
            this.registry = registry;
        }

        @Override
        public synchronized CompletableFuture<String> start(io.github.hedge.core.AttemptContext ctx) {
            currentAtStart.put(ctx.attemptNumber(), registry.getCurrentObservation());
            ctx.reportTarget("10.0.0." + ctx.attemptNumber() + ":9042");
            CompletableFuture<String> f = new CompletableFuture<>();
            futures.add(f);
            return f;
        }

        synchronized CompletableFuture<String> attempt(int n) {
            return futures.get(n - 1);
        }
    }

    private Observation.Context attempt(int n) {
        return recorded.named(HedgeObservations.ATTEMPT_NAME).stream()
                .filter(c -> Integer.toString(n).equals(key(c, "hedge.attempt")))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void should_record_attempts_as_children_of_the_call_and_mark_the_winner_when_a_hedge_wins() {
        HedgedExecutor ex = HedgedExecutor.of(
                "users", config(HedgeObservations.of(registry)).build());
        Attempts attempts = new Attempts(registry);

        CompletableFuture<String> call =
                ex.executeAsync(CallOptions.builder().operation("getUser").build(), attempts);
        time.advance(Duration.ofMillis(10));
        attempts.attempt(2).complete("user");

        assertThat(call).isCompletedWithValue("user");
        assertThat(attempts.attempt(1)).isCancelled();
        List<Observation.Context> calls = recorded.named(HedgeObservations.CALL_NAME);
        assertThat(calls).hasSize(1);
        Observation.Context c = calls.get(0);
        assertThat(c.getContextualName()).isEqualTo("users getUser");
        assertThat(key(c, "hedge.executor")).isEqualTo("users");
        assertThat(key(c, "hedge.operation")).isEqualTo("getUser");
        assertThat(key(c, "hedge.outcome")).isEqualTo("success");
        assertThat(key(c, "hedge.attempts")).isEqualTo("2");
        assertThat(key(c, "hedge.winner")).isEqualTo("2");
        assertThat(recorded.named(HedgeObservations.ATTEMPT_NAME)).hasSize(2);
        Observation.Context primary = attempt(1);
        Observation.Context hedge = attempt(2);
        assertThat(primary.getParentObservation().getContextView()).isSameAs(c);
        assertThat(hedge.getParentObservation().getContextView()).isSameAs(c);
        assertThat(key(primary, "hedge.reason")).isEqualTo("primary");
        assertThat(key(primary, "hedge.outcome")).isEqualTo("lost-cancelled");
        assertThat(key(hedge, "hedge.reason")).isEqualTo("delay-elapsed");
        assertThat(key(hedge, "hedge.outcome")).isEqualTo("won");
        assertThat(hedge.getContextualName()).isEqualTo("users getUser attempt 2");
        assertThat(recorded.open()).isEmpty();
        TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyRemainingCurrentObservation();
    }

    @Test
    void should_run_each_attempt_inside_its_own_observation_when_started() {
        HedgedExecutor ex = HedgedExecutor.of(
                "users", config(HedgeObservations.of(registry)).build());
        Attempts attempts = new Attempts(registry);

        ex.executeAsync(attempts);
        time.advance(Duration.ofMillis(10));
        attempts.attempt(1).complete("user");

        assertThat(attempts.currentAtStart.get(1).getContext()).isSameAs(attempt(1));
        assertThat(attempts.currentAtStart.get(2).getContext()).isSameAs(attempt(2));
        assertThat(key(attempt(1), "hedge.outcome")).isEqualTo("won");
        assertThat(key(attempt(2), "hedge.outcome")).isEqualTo("lost-cancelled");
    }

    @Test
    void should_run_a_blocking_attempt_inside_its_observation_when_on_the_attempt_thread() throws Exception {
        Executor otherThread = r -> new Thread(r, "attempt").start();
        HedgedExecutor ex = HedgedExecutor.of(
                "users",
                config(HedgeObservations.of(registry))
                        .attemptExecutor(otherThread)
                        .build());
        AtomicReference<Observation> seen = new AtomicReference<>();
        AtomicReference<String> thread = new AtomicReference<>();

        String result = ex.execute(() -> {
            seen.set(registry.getCurrentObservation());
            thread.set(Thread.currentThread().getName());
            return "user";
        });

        assertThat(result).isEqualTo("user");
        assertThat(thread.get()).isEqualTo("attempt");
        assertThat(seen.get().getContext()).isSameAs(attempt(1));
    }

    @Test
    void should_name_the_error_type_and_no_user_data_when_an_attempt_fails() {
        HedgedExecutor ex = HedgedExecutor.of(
                "users", config(HedgeObservations.of(registry)).build());
        Attempts attempts = new Attempts(registry);

        CompletableFuture<String> call = ex.executeAsync(
                CallOptions.builder()
                        .details(() -> "SELECT * FROM users WHERE id='secret-42'")
                        .build(),
                attempts);
        attempts.attempt(1).completeExceptionally(new IllegalStateException("user secret-42 not found"));
        attempts.attempt(2).complete("user");

        assertThat(call).isCompletedWithValue("user");
        assertThat(key(attempt(1), "hedge.outcome")).isEqualTo("failed");
        assertThat(key(attempt(1), "hedge.error")).isEqualTo("IllegalStateException");
        assertThat(key(attempt(2), "hedge.reason")).isEqualTo("previous-failed");
        assertThat(key(attempt(2), "hedge.error")).isEqualTo("none");
        for (Observation.Context c : recorded.started) {
            assertThat(c.getAllKeyValues().stream().map(kv -> kv.getKey() + "=" + kv.getValue()))
                    .noneMatch(s -> s.contains("secret") || s.contains("10.0.0."));
            assertThat(c.getError()).isNull();
        }
    }

    @Test
    void should_add_the_target_as_high_cardinality_key_value_when_opted_in() {
        HedgedExecutor ex = HedgedExecutor.of(
                "users",
                config(HedgeObservations.builder(registry).includeTargets(true).build())
                        .build());
        Attempts attempts = new Attempts(registry);

        ex.executeAsync(attempts);
        attempts.attempt(1).complete("user");

        assertThat(attempt(1).getHighCardinalityKeyValue("hedge.target").getValue())
                .isEqualTo("10.0.0.1:9042");
        assertThat(attempt(1).getLowCardinalityKeyValue("hedge.target")).isNull();
    }

    @Test
    void should_mark_a_beaten_primary_left_running_when_loser_sampling_keeps_it() {
        HedgedExecutor ex = HedgedExecutor.of(
                "users",
                config(HedgeObservations.of(registry)).loserSampling(1.0).build());
        Attempts attempts = new Attempts(registry);

        ex.executeAsync(attempts);
        time.advance(Duration.ofMillis(10));
        attempts.attempt(2).complete("user");

        assertThat(attempts.attempt(1)).isNotDone();
        assertThat(key(attempt(1), "hedge.outcome")).isEqualTo("left-running");
        assertThat(key(attempt(2), "hedge.outcome")).isEqualTo("won");
        assertThat(recorded.open()).isEmpty();
    }

    @Test
    void should_end_attempts_as_cancelled_when_the_caller_cancels() {
        HedgedExecutor ex = HedgedExecutor.of(
                "users", config(HedgeObservations.of(registry)).build());
        Attempts attempts = new Attempts(registry);

        CompletableFuture<String> call = ex.executeAsync(attempts);
        time.advance(Duration.ofMillis(10));
        call.cancel(true);

        Observation.Context c = recorded.named(HedgeObservations.CALL_NAME).get(0);
        assertThat(key(c, "hedge.outcome")).isEqualTo("cancelled");
        assertThat(key(c, "hedge.winner")).isEqualTo("none");
        assertThat(key(attempt(1), "hedge.outcome")).isEqualTo("cancelled");
        assertThat(key(attempt(2), "hedge.outcome")).isEqualTo("cancelled");
        assertThat(recorded.open()).isEmpty();
    }

    @Test
    void should_nest_the_call_under_the_callers_observation_when_one_is_current() {
        HedgedExecutor ex = HedgedExecutor.of(
                "users", config(HedgeObservations.of(registry)).build());
        Attempts attempts = new Attempts(registry);
        Observation request = Observation.start("http.server.requests", registry);

        try (Observation.Scope ignored = request.openScope()) {
            ex.executeAsync(attempts);
        }
        attempts.attempt(1).complete("user");
        request.stop();

        Observation.Context c = recorded.named(HedgeObservations.CALL_NAME).get(0);
        assertThat(c.getParentObservation()).isSameAs(request);
    }

    @Test
    void should_not_decorate_calls_when_the_registry_is_a_noop() {
        HedgeObservations observations = HedgeObservations.of(ObservationRegistry.NOOP);
        HedgedExecutor ex = HedgedExecutor.of("users", config(observations).build());
        AttemptFunction<String> fn = ctx -> CompletableFuture.completedFuture("user");

        io.github.hedge.core.spi.CallDecorator.Executor view = new io.github.hedge.core.spi.CallDecorator.Executor() {
            @Override
            public String name() {
                return ex.name();
            }

            @Override
            public io.github.hedge.core.event.HedgeEvents events() {
                return ex.events();
            }

            @Override
            public int maxAttempts() {
                return ex.config().maxAttempts();
            }
        };

        assertThat(observations.decorate(view, CallOptions.defaults(), fn)).isSameAs(fn);
    }

    @Test
    void should_leave_no_observation_open_when_ten_thousand_random_calls_end() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(recorded);
        HedgeObservations observations = HedgeObservations.of(registry);
        HedgedExecutor ex = HedgedExecutor.of(
                "random", config(observations).deadline(Duration.ofMillis(50)).build());
        Random random = new Random(40);
        List<CompletableFuture<String>> calls = new ArrayList<>();
        List<CompletableFuture<String>> pending = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            CompletableFuture<String> call = ex.executeAsync(ctx -> {
                CompletableFuture<String> f = new CompletableFuture<>();
                switch (random.nextInt(5)) {
                    case 0 -> f.complete("now");
                    case 1 -> f.completeExceptionally(new IllegalStateException("x"));
                    case 2 -> {} // hangs until the deadline or a winner cancels it
                    default -> pending.add(f);
                }
                return f;
            });
            calls.add(call);
            if (random.nextInt(10) == 0) {
                call.cancel(true);
            }
            time.advanceNanos(random.nextInt(15) * MS);
            while (!pending.isEmpty() && random.nextBoolean()) {
                CompletableFuture<String> f = pending.remove(random.nextInt(pending.size()));
                if (random.nextBoolean()) {
                    f.complete("late");
                } else {
                    f.completeExceptionally(new IllegalStateException("y"));
                }
            }
        }
        time.advance(Duration.ofSeconds(1));

        assertThat(calls).allMatch(CompletableFuture::isDone);
        assertThat(recorded.named(HedgeObservations.CALL_NAME)).hasSize(10_000);
        assertThat(recorded.open()).isEmpty();
        assertThat(observations.openCalls()).isZero();
        assertThat(recorded.named(HedgeObservations.ATTEMPT_NAME))
                .extracting(c -> key(c, "hedge.outcome"))
                .contains("won", "lost-cancelled", "failed", "cancelled");
        assertThat(registry.getCurrentObservation()).isNull();
    }
}

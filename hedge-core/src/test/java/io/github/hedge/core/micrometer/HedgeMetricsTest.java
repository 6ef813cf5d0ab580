package io.github.hedge.core.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.AttemptRecord.AttemptOutcome;
import io.github.hedge.core.event.AttemptStarted;
import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.CallCompleted.CallOutcome;
import io.github.hedge.core.event.HedgeEvents;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HedgeMetricsTest {
    private static final long MS = 1_000_000L;

    private final HedgeEvents events = new HedgeEvents();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private HedgeMetrics metrics;

    @AfterEach
    void tearDown() {
        if (metrics != null) {
            metrics.close();
        }
    }

    // ------------------------------------------------------------------ fixtures

    /** Primary slow and cancelled; hedge #2 wins: the classic hedge win. */
    private static CallCompleted hedgeWonCall(long callId) {
        return new CallCompleted(
                "users",
                callId,
                CallOutcome.SUCCESS,
                106 * MS,
                2,
                List.of(
                        new AttemptRecord(1, "10.0.0.1:9042", 0, 106 * MS, AttemptOutcome.CANCELLED, null),
                        new AttemptRecord(2, "10.0.0.2:9042", 95 * MS, 11 * MS, AttemptOutcome.WON, null)),
                "getUser",
                () -> "SELECT * FROM users WHERE id=42",
                1_000 * MS);
    }

    /** Primary fails, hedge #2 is sent after the failure and succeeds, hedge #3 arrives late. */
    private static CallCompleted failedPrimaryCall(long callId) {
        return new CallCompleted(
                "users",
                callId,
                CallOutcome.SUCCESS,
                30 * MS,
                2,
                List.of(
                        new AttemptRecord(1, "10.0.0.1:9042", 0, 5 * MS, AttemptOutcome.FAILED, "java.io.IOException"),
                        new AttemptRecord(2, "10.0.0.2:9042", 5 * MS, 25 * MS, AttemptOutcome.WON, null),
                        new AttemptRecord(3, "10.0.0.3:9042", 20 * MS, 12 * MS, AttemptOutcome.SUCCEEDED_LATE, null)),
                "getUser",
                null,
                2_000 * MS);
    }

    private static CallCompleted primaryOnlyCall(long callId, CallOutcome outcome, AttemptOutcome attempt, long nanos) {
        return new CallCompleted(
                "users",
                callId,
                outcome,
                nanos,
                attempt == AttemptOutcome.WON ? 1 : 0,
                List.of(new AttemptRecord(
                        1,
                        "10.0.0.1:9042",
                        0,
                        nanos,
                        attempt,
                        attempt == AttemptOutcome.FAILED ? "java.lang.IllegalStateException" : null)),
                null,
                null,
                3_000 * MS);
    }

    private HedgeMetrics bound(HedgeMetrics m) {
        metrics = m;
        m.bindTo(registry);
        return m;
    }

    private static double count(MeterRegistry r, String name, String... tags) {
        Counter c = r.find(name).tags(tags).counter();
        assertThat(c).as("counter %s %s", name, List.of(tags)).isNotNull();
        return c.count();
    }

    private static Timer timer(MeterRegistry r, String name, String... tags) {
        Timer t = r.find(name).tags(tags).timer();
        assertThat(t).as("timer %s %s", name, List.of(tags)).isNotNull();
        return t;
    }

    // ------------------------------------------------------------------ counters

    @Test
    void should_count_calls_by_outcome_when_call_completed_events_are_published() {
        bound(HedgeMetrics.of("users", events));

        events.publish(hedgeWonCall(1));
        events.publish(failedPrimaryCall(2));
        events.publish(primaryOnlyCall(3, CallOutcome.FAILURE, AttemptOutcome.FAILED, 7 * MS));
        events.publish(primaryOnlyCall(4, CallOutcome.DEADLINE_EXCEEDED, AttemptOutcome.CANCELLED, 1_000 * MS));
        events.publish(primaryOnlyCall(5, CallOutcome.CANCELLED, AttemptOutcome.CANCELLED, 3 * MS));

        assertThat(count(registry, "hedge.calls", "name", "users", "outcome", "success"))
                .isEqualTo(2);
        assertThat(count(registry, "hedge.calls", "outcome", "failure")).isEqualTo(1);
        assertThat(count(registry, "hedge.calls", "outcome", "deadline_exceeded"))
                .isEqualTo(1);
        assertThat(count(registry, "hedge.calls", "outcome", "cancelled")).isEqualTo(1);
    }

    @Test
    void should_count_attempts_by_outcome_and_kind_when_trace_has_primary_and_hedges() {
        bound(HedgeMetrics.of("users", events));

        events.publish(hedgeWonCall(1));
        events.publish(failedPrimaryCall(2));
        events.publish(primaryOnlyCall(3, CallOutcome.SUCCESS, AttemptOutcome.WON, 4 * MS));

        assertThat(count(registry, "hedge.attempts", "outcome", "won", "kind", "primary"))
                .isEqualTo(1);
        assertThat(count(registry, "hedge.attempts", "outcome", "won", "kind", "hedge"))
                .isEqualTo(2);
        assertThat(count(registry, "hedge.attempts", "outcome", "cancelled", "kind", "primary"))
                .isEqualTo(1);
        assertThat(count(registry, "hedge.attempts", "outcome", "failed", "kind", "primary"))
                .isEqualTo(1);
        assertThat(count(registry, "hedge.attempts", "outcome", "succeeded_late", "kind", "hedge"))
                .isEqualTo(1);
        assertThat(count(registry, "hedge.attempts", "outcome", "cancelled", "kind", "hedge"))
                .isZero();
        double all = registry.find("hedge.attempts").counters().stream()
                .mapToDouble(Counter::count)
                .sum();
        assertThat(all).isEqualTo(6);
    }

    @Test
    void should_record_attempt_and_call_latency_when_call_completed() {
        bound(HedgeMetrics.of("users", events));

        events.publish(hedgeWonCall(1));
        events.publish(failedPrimaryCall(2));

        Timer primary = timer(registry, "hedge.attempt.latency", "kind", "primary");
        assertThat(primary.count()).isEqualTo(2);
        assertThat(primary.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(106 + 5);
        assertThat(primary.max(TimeUnit.MILLISECONDS)).isEqualTo(106);
        Timer hedge = timer(registry, "hedge.attempt.latency", "kind", "hedge");
        assertThat(hedge.count()).isEqualTo(3);
        assertThat(hedge.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(11 + 25 + 12);

        Timer calls = timer(registry, "hedge.call.latency", "outcome", "success");
        assertThat(calls.count()).isEqualTo(2);
        assertThat(calls.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(106 + 30);
        assertThat(calls.getId().getBaseUnit()).isEqualTo("seconds");
        assertThat(timer(registry, "hedge.call.latency", "outcome", "failure").count())
                .isZero();
    }

    @Test
    void should_count_hedges_sent_won_denied_and_not_hedged_when_those_events_are_published() {
        bound(HedgeMetrics.of("users", events));

        events.publish(new AttemptStarted("users", 1, 1, 0));
        events.publish(new AttemptStarted("users", 1, 2, 95 * MS));
        events.publish(new HedgeSent("users", 1, 2, HedgeSent.Reason.DELAY_ELAPSED, 95 * MS, 95 * MS));
        events.publish(new HedgeWon("users", 1, 2, "10.0.0.2:9042", 106 * MS));
        events.publish(new HedgeSent("users", 2, 2, HedgeSent.Reason.PREVIOUS_FAILED, 0, 200 * MS));
        events.publish(new HedgeSent("users", 2, 3, HedgeSent.Reason.DELAY_ELAPSED, 20 * MS, 220 * MS));
        events.publish(new BudgetExhausted("users", 3, 2, 300 * MS));
        events.publish(new NotHedged("users", 3, NotHedged.Reason.BUDGET_EXHAUSTED, 300 * MS));
        events.publish(new NotHedged("users", 4, NotHedged.Reason.NON_IDEMPOTENT, 400 * MS));
        events.publish(new NotHedged("users", 5, NotHedged.Reason.NON_IDEMPOTENT, 500 * MS));

        assertThat(count(registry, "hedge.hedges.sent", "reason", "delay_elapsed"))
                .isEqualTo(2);
        assertThat(count(registry, "hedge.hedges.sent", "reason", "previous_failed"))
                .isEqualTo(1);
        assertThat(count(registry, "hedge.hedges.won", "name", "users")).isEqualTo(1);
        assertThat(count(registry, "hedge.budget.denied", "name", "users")).isEqualTo(1);
        assertThat(count(registry, "hedge.not.hedged", "reason", "budget_exhausted"))
                .isEqualTo(1);
        assertThat(count(registry, "hedge.not.hedged", "reason", "non_idempotent"))
                .isEqualTo(2);
        assertThat(count(registry, "hedge.not.hedged", "reason", "policy_declined"))
                .isZero();
        assertThat(count(registry, "hedge.not.hedged", "reason", "max_attempts"))
                .isZero();
        assertThat(count(registry, "hedge.not.hedged", "reason", "pushback")).isZero();
        // AttemptStarted feeds nothing of its own: attempts are counted from the CallCompleted trace
        assertThat(registry.find("hedge.attempts").counters())
                .allSatisfy(c -> assertThat(c.count()).isZero());
    }

    @Test
    void should_register_every_meter_at_zero_when_bound_before_any_event() {
        bound(HedgeMetrics.of("users", events));

        Set<String> names =
                registry.getMeters().stream().map(m -> m.getId().getName()).collect(Collectors.toSet());
        assertThat(names)
                .containsExactlyInAnyOrder(
                        "hedge.calls",
                        "hedge.attempts",
                        "hedge.hedges.sent",
                        "hedge.hedges.won",
                        "hedge.budget.denied",
                        "hedge.not.hedged",
                        "hedge.attempt.latency",
                        "hedge.call.latency");
        // 4 call outcomes, 5x2 attempts, 3 sent reasons, won, denied, 9 not-hedged reasons, 2 + 4 timers
        assertThat(registry.getMeters()).hasSize(4 + 10 + 3 + 1 + 1 + 9 + 2 + 4);
        assertThat(events.listenerCount()).isEqualTo(1);
    }

    @Test
    void should_not_make_producers_build_attempt_started_when_only_metrics_listen() {
        HedgeMetrics.of("users", events).bindTo(registry);

        assertThat(events.hasListeners(AttemptStarted.class)).isFalse();
        assertThat(events.hasListeners(CallCompleted.class)).isTrue();
        assertThat(events.hasListeners(HedgeSent.class)).isTrue();
        assertThat(events.hasListeners(HedgeWon.class)).isTrue();
        assertThat(events.hasListeners(BudgetExhausted.class)).isTrue();
        assertThat(events.hasListeners(NotHedged.class)).isTrue();
    }

    // ------------------------------------------------------------------ tags

    @Test
    void should_never_tag_target_or_operation_or_user_data_when_defaults_are_used() {
        bound(HedgeMetrics.of("users", events));

        events.publish(hedgeWonCall(1));
        events.publish(failedPrimaryCall(2));
        events.publish(new HedgeWon("users", 1, 2, "10.0.0.2:9042", 106 * MS));

        Set<String> tagKeys = registry.getMeters().stream()
                .flatMap(m -> m.getId().getTags().stream())
                .map(Tag::getKey)
                .collect(Collectors.toSet());
        assertThat(tagKeys).containsExactlyInAnyOrder("name", "outcome", "kind", "reason");
        Set<String> tagValues = registry.getMeters().stream()
                .flatMap(m -> m.getId().getTags().stream())
                .map(Tag::getValue)
                .collect(Collectors.toSet());
        assertThat(tagValues)
                .noneMatch(v -> v.contains("10.0.0."))
                .doesNotContain("getUser")
                .noneMatch(v -> v.contains("SELECT"))
                .noneMatch(v -> v.contains("Exception"));
        assertThat(registry.getMeters())
                .allSatisfy(m -> assertThat(m.getId().getTag("name")).isEqualTo("users"));
    }

    @Test
    void should_tag_calls_and_attempts_by_operation_when_tag_operation_is_enabled() {
        bound(HedgeMetrics.builder("users", events).tagOperation(true).build());

        events.publish(hedgeWonCall(1));
        events.publish(hedgeWonCall(2));
        events.publish(primaryOnlyCall(3, CallOutcome.SUCCESS, AttemptOutcome.WON, 4 * MS));

        assertThat(count(registry, "hedge.calls", "operation", "getUser", "outcome", "success"))
                .isEqualTo(2);
        assertThat(count(registry, "hedge.calls", "operation", "none", "outcome", "success"))
                .isEqualTo(1);
        assertThat(count(registry, "hedge.attempts", "operation", "getUser", "outcome", "won", "kind", "hedge"))
                .isEqualTo(2);
        assertThat(timer(registry, "hedge.attempt.latency", "operation", "none", "kind", "primary")
                        .count())
                .isEqualTo(1);
        // meters not fed by CallCompleted have no operation to tag
        assertThat(registry.find("hedge.hedges.sent").counters())
                .allSatisfy(c -> assertThat(c.getId().getTag("operation")).isNull());
        // every meter of one name has the same tag keys (Prometheus requires it)
        assertThat(registry.find("hedge.calls").counters())
                .allSatisfy(c -> assertThat(c.getId().getTag("operation")).isNotNull());
    }

    @Test
    void should_fold_operations_into_other_when_more_than_the_cap_are_seen() {
        bound(HedgeMetrics.builder("users", events).tagOperation(true).build());

        for (int i = 0; i < HedgeMetrics.MAX_OPERATIONS + 20; i++) {
            events.publish(new CallCompleted(
                    "users",
                    i,
                    CallOutcome.SUCCESS,
                    MS,
                    1,
                    List.of(new AttemptRecord(1, null, 0, MS, AttemptOutcome.WON, null)),
                    "op" + i,
                    null,
                    i));
        }

        Set<String> operations = registry.find("hedge.calls").counters().stream()
                .map(c -> c.getId().getTag("operation"))
                .collect(Collectors.toSet());
        assertThat(operations).hasSize(HedgeMetrics.MAX_OPERATIONS + 1).contains("other");
        assertThat(count(registry, "hedge.calls", "operation", "other", "outcome", "success"))
                .isEqualTo(20);
    }

    @Test
    void should_never_exceed_the_operation_cap_when_threads_bring_new_labels_at_once() throws Exception {
        bound(HedgeMetrics.builder("users", events).tagOperation(true).build());
        int threads = 8;
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
        List<Thread> workers = new java.util.ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int offset = t;
            Thread w = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < 50; i++) {
                    events.publish(new CallCompleted(
                            "users",
                            i,
                            CallOutcome.SUCCESS,
                            MS,
                            1,
                            List.of(new AttemptRecord(1, null, 0, MS, AttemptOutcome.WON, null)),
                            "op" + (offset * 50 + i),
                            null,
                            MS));
                }
            });
            workers.add(w);
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        Set<String> operations = registry.find("hedge.calls").counters().stream()
                .map(c -> c.getId().getTag("operation"))
                .collect(Collectors.toSet());
        assertThat(operations).hasSize(HedgeMetrics.MAX_OPERATIONS + 1).contains("other");
        double total = registry.find("hedge.calls").counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
        assertThat(total).isEqualTo(threads * 50);
    }

    @Test
    void should_use_prefix_and_common_tags_when_configured() {
        bound(HedgeMetrics.builder("users", events)
                .prefix("myapp.hedging")
                .tags("region", "eu-west-1", "app", "shop")
                .build());

        events.publish(hedgeWonCall(1));

        assertThat(registry.find("hedge.calls").meters()).isEmpty();
        assertThat(count(
                        registry,
                        "myapp.hedging.calls",
                        "name",
                        "users",
                        "region",
                        "eu-west-1",
                        "app",
                        "shop",
                        "outcome",
                        "success"))
                .isEqualTo(1);
        assertThat(registry.getMeters()).allSatisfy(m -> {
            assertThat(m.getId().getName()).startsWith("myapp.hedging.");
            assertThat(m.getId().getTag("region")).isEqualTo("eu-west-1");
        });
    }

    /** SimpleMeterRegistry publishes no buckets, so capture the config each timer is built with. */
    private Map<String, Boolean> capturePercentileHistogramFlags() {
        Map<String, Boolean> flags = new ConcurrentHashMap<>();
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                String key =
                        id.getName() + "," + (id.getTag("kind") != null ? id.getTag("kind") : id.getTag("outcome"));
                flags.put(key, Boolean.TRUE.equals(config.isPercentileHistogram()));
                return config;
            }
        });
        return flags;
    }

    @Test
    void should_publish_a_percentile_histogram_of_attempt_latency_when_enabled() {
        Map<String, Boolean> flags = capturePercentileHistogramFlags();
        bound(HedgeMetrics.builder("users", events).percentileHistogram(true).build());

        assertThat(flags)
                .containsEntry("hedge.attempt.latency,primary", true)
                .containsEntry("hedge.attempt.latency,hedge", true)
                .containsEntry("hedge.call.latency,success", false);
    }

    @Test
    void should_not_publish_a_percentile_histogram_when_defaults_are_used() {
        Map<String, Boolean> flags = capturePercentileHistogramFlags();
        bound(HedgeMetrics.of("users", events));

        assertThat(flags)
                .containsEntry("hedge.attempt.latency,primary", false)
                .containsEntry("hedge.attempt.latency,hedge", false);
    }

    // ------------------------------------------------------------------ gauges

    /** Stands in for an executor: the branch's LatencyTracker and HedgeBudget are shells. */
    static final class FakeExecutorState {
        final AtomicLong delayNanos = new AtomicLong(DelayPolicy.NO_HEDGE);
        volatile double budgetRemaining = 3.5;
        final AtomicLong inFlight = new AtomicLong();
    }

    private static HedgeMetrics withGauges(HedgeEvents events, FakeExecutorState state) {
        return HedgeMetrics.builder("users", events)
                .gauges(state, s -> s.delayNanos.get(), s -> s.budgetRemaining, s -> s.inFlight.get())
                .build();
    }

    @Test
    void should_report_delay_budget_and_in_flight_gauges_when_given_gauge_sources() {
        FakeExecutorState state = new FakeExecutorState();
        bound(withGauges(events, state));

        state.delayNanos.set(95 * MS);
        state.inFlight.set(7);

        assertThat(registry.find("hedge.delay.current")
                        .tag("name", "users")
                        .timeGauge()
                        .value(TimeUnit.MILLISECONDS))
                .isCloseTo(95.0, within(1e-9));
        assertThat(registry.find("hedge.delay.current").timeGauge().getId().getBaseUnit())
                .isEqualTo("seconds");
        assertThat(registry.find("hedge.delay.current").timeGauge().value()).isCloseTo(0.095, within(1e-12));
        assertThat(registry.find("hedge.budget.remaining").gauge().value()).isEqualTo(3.5);
        assertThat(registry.find("hedge.budget.remaining").gauge().getId().getBaseUnit())
                .isEqualTo("tokens");
        assertThat(registry.find("hedge.calls.in.flight").gauge().value()).isEqualTo(7);

        state.budgetRemaining = 0.25;
        state.inFlight.set(0);
        assertThat(registry.find("hedge.budget.remaining").gauge().value()).isEqualTo(0.25);
        assertThat(registry.find("hedge.calls.in.flight").gauge().value()).isZero();
    }

    @Test
    void should_report_nan_delay_when_the_policy_would_not_hedge() {
        FakeExecutorState state = new FakeExecutorState();
        bound(withGauges(events, state));

        state.delayNanos.set(DelayPolicy.NO_HEDGE);

        assertThat(registry.find("hedge.delay.current").timeGauge().value()).isNaN();
    }

    @Test
    void should_have_no_gauges_when_built_from_events_alone() {
        bound(HedgeMetrics.of("cassandra", events));

        assertThat(registry.find("hedge.delay.current").meters()).isEmpty();
        assertThat(registry.find("hedge.budget.remaining").meters()).isEmpty();
        assertThat(registry.find("hedge.calls.in.flight").meters()).isEmpty();
    }

    @Test
    void should_skip_a_gauge_when_its_source_function_is_null() {
        FakeExecutorState state = new FakeExecutorState();
        bound(HedgeMetrics.builder("users", events)
                .gauges(state, null, null, s -> s.inFlight.get())
                .build());

        assertThat(registry.find("hedge.delay.current").meters()).isEmpty();
        assertThat(registry.find("hedge.budget.remaining").meters()).isEmpty();
        assertThat(registry.find("hedge.calls.in.flight").gauge()).isNotNull();
    }

    @Test
    void should_not_keep_the_gauge_state_alive_when_only_the_metrics_reference_it() throws Exception {
        FakeExecutorState state = new FakeExecutorState();
        state.inFlight.set(3);
        bound(withGauges(events, state));
        assertThat(registry.find("hedge.calls.in.flight").gauge().value()).isEqualTo(3);
        WeakReference<FakeExecutorState> ref = new WeakReference<>(state);
        state = null;

        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10))
                .untilAsserted(() -> {
                    System.gc();
                    assertThat(ref.get()).as("gauge state collected").isNull();
                });
        assertThat(registry.find("hedge.calls.in.flight").gauge().value()).isNaN();
    }

    // ------------------------------------------------------------------ binding and closing

    @Test
    void should_count_in_every_registry_when_bound_to_two_registries() {
        SimpleMeterRegistry other = new SimpleMeterRegistry();
        FakeExecutorState state = new FakeExecutorState();
        state.inFlight.set(2);
        bound(withGauges(events, state)).bindTo(other);

        events.publish(hedgeWonCall(1));

        for (MeterRegistry r : List.of(registry, other)) {
            assertThat(count(r, "hedge.calls", "outcome", "success")).isEqualTo(1);
            assertThat(timer(r, "hedge.attempt.latency", "kind", "hedge").count())
                    .isEqualTo(1);
            assertThat(r.find("hedge.calls.in.flight").gauge().value()).isEqualTo(2);
        }
        assertThat(events.listenerCount()).isEqualTo(1);
    }

    @Test
    void should_bind_once_when_bound_twice_to_the_same_registry() {
        bound(HedgeMetrics.of("users", events)).bindTo(registry);

        events.publish(hedgeWonCall(1));

        assertThat(count(registry, "hedge.calls", "outcome", "success")).isEqualTo(1);
        assertThat(events.listenerCount()).isEqualTo(1);
    }

    @Test
    void should_unsubscribe_and_remove_its_meters_from_every_registry_when_closed() {
        SimpleMeterRegistry other = new SimpleMeterRegistry();
        Counter unrelated = registry.counter("app.requests");
        FakeExecutorState state = new FakeExecutorState();
        HedgeMetrics m = bound(HedgeMetrics.builder("users", events)
                .tagOperation(true)
                .gauges(state, s -> s.delayNanos.get(), s -> s.budgetRemaining, s -> s.inFlight.get())
                .build());
        m.bindTo(other);
        events.publish(hedgeWonCall(1));
        assertThat(registry.find("hedge.calls").counters()).isNotEmpty();

        m.close();

        assertThat(events.listenerCount()).isZero();
        assertThat(registry.getMeters()).containsExactly(unrelated);
        assertThat(other.getMeters()).isEmpty();
        events.publish(hedgeWonCall(2));
        events.publish(new HedgeSent("users", 2, 2, HedgeSent.Reason.DELAY_ELAPSED, MS, MS));
        assertThat(registry.getMeters()).containsExactly(unrelated);
        assertThat(other.getMeters()).isEmpty();
    }

    @Test
    void should_be_idempotent_and_refuse_binding_when_closed() {
        HedgeMetrics m = bound(HedgeMetrics.of("users", events));

        m.close();
        m.close();

        assertThatThrownBy(() -> m.bindTo(new SimpleMeterRegistry()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("HedgeMetrics for 'users' is closed");
        assertThat(events.listenerCount()).isZero();
    }

    @Test
    void should_not_subscribe_when_never_bound() {
        HedgeMetrics m = HedgeMetrics.of("users", events);

        assertThat(events.listenerCount()).isZero();
        m.close();
        assertThat(events.listenerCount()).isZero();
    }

    // ------------------------------------------------------------------ validation

    @Test
    void should_reject_reserved_tag_keys_when_given_as_common_tags() {
        HedgeMetrics.Builder b = HedgeMetrics.builder("users", events);

        assertThatThrownBy(() -> b.tags("outcome", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tags must not use a reserved key (name, outcome, kind, reason, operation), was outcome");
        assertThatThrownBy(() -> b.tags(List.of(Tag.of("name", "x"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageEndingWith("was name");
    }

    @Test
    void should_reject_bad_prefix_or_name_when_building() {
        assertThatThrownBy(() -> HedgeMetrics.builder("users", events).prefix(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("prefix must not be blank, was \" \"");
        assertThatThrownBy(() -> HedgeMetrics.builder("users", events).prefix("hedge."))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("prefix must be a dotted name without spaces or a leading or trailing dot, was \"hedge.\"");
        assertThatThrownBy(() -> HedgeMetrics.of("", events))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("name must not be blank, was \"\"");
        assertThatThrownBy(() -> HedgeMetrics.of("users", null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("events must not be null");
        assertThatThrownBy(() -> HedgeMetrics.of("users", events).bindTo(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("registry must not be null");
    }

    @Test
    void should_keep_counting_when_a_meter_is_denied_by_a_registry_filter() {
        registry.config().meterFilter(MeterFilter.denyNameStartsWith("hedge.attempt"));
        bound(HedgeMetrics.of("users", events));

        events.publish(hedgeWonCall(1));

        assertThat(registry.find("hedge.attempts").meters()).isEmpty();
        assertThat(count(registry, "hedge.calls", "outcome", "success")).isEqualTo(1);
        List<Meter> meters = registry.getMeters();
        metrics.close();
        assertThat(registry.getMeters()).isEmpty();
        assertThat(meters).isNotEmpty();
    }
}

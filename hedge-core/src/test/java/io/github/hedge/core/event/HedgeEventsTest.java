package io.github.hedge.core.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.event.CallCompleted.CallOutcome;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The stream alone: which listener gets which event, and what producers are told to build. */
class HedgeEventsTest {
    private static final long MS = 1_000_000L;

    private final HedgeEvents events = new HedgeEvents();

    /** A listener of the given types that takes calls of at least {@code minNanos}. */
    private static final class Recorder implements HedgeEventListener {
        final List<HedgeEvent> seen = new CopyOnWriteArrayList<>();
        final Set<Class<? extends HedgeEvent>> types;
        final long minNanos;

        Recorder(Set<Class<? extends HedgeEvent>> types, long minNanos) {
            this.types = types;
            this.minNanos = minNanos;
        }

        @Override
        public Set<Class<? extends HedgeEvent>> eventTypes() {
            return types;
        }

        @Override
        public boolean wantsCallCompleted(CallOutcome outcome, long totalNanos) {
            return totalNanos >= minNanos;
        }

        @Override
        public void onEvent(HedgeEvent event) {
            seen.add(event);
        }
    }

    private static CallCompleted completed(long totalNanos) {
        return new CallCompleted("x", 1, CallOutcome.SUCCESS, totalNanos, 1, List.of(), null, null, totalNanos);
    }

    private static HedgeSent sent() {
        return new HedgeSent("x", 1, 2, HedgeSent.Reason.DELAY_ELAPSED, 10 * MS, 10 * MS);
    }

    @Test
    void should_deliver_only_the_declared_types_when_a_listener_declares_event_types() {
        Recorder r = new Recorder(Set.of(CallCompleted.class), 0);
        events.subscribe(r);

        events.publish(sent());
        events.publish(new AttemptStarted("x", 1, 1, 0));
        events.publish(completed(5 * MS));

        assertThat(r.seen).singleElement().isInstanceOf(CallCompleted.class);
    }

    @Test
    void should_tell_producers_a_type_has_no_listener_when_only_other_types_are_subscribed() {
        assertThat(events.hasListeners(HedgeSent.class)).isFalse();
        events.subscribe(new Recorder(Set.of(CallCompleted.class), 0));
        events.subscribe(HedgeWon.class, e -> {});

        assertThat(events.hasListeners()).isTrue();
        assertThat(events.hasListeners(CallCompleted.class)).isTrue();
        assertThat(events.hasListeners(HedgeWon.class)).isTrue();
        assertThat(events.hasListeners(HedgeEvent.class)).isTrue();
        assertThat(events.hasListeners(AttemptStarted.class)).isFalse();
        assertThat(events.hasListeners(HedgeSent.class)).isFalse();
        assertThat(events.hasListeners(NotHedged.class)).isFalse();
        assertThat(events.hasListeners(BudgetExhausted.class)).isFalse();
    }

    @Test
    void should_take_every_type_when_a_listener_declares_nothing() {
        List<HedgeEvent> seen = new CopyOnWriteArrayList<>();
        events.subscribe(seen::add);

        assertThat(events.hasListeners(AttemptStarted.class)).isTrue();
        assertThat(events.wantsCallCompleted(CallOutcome.SUCCESS, 0)).isTrue();
        events.publish(sent());
        events.publish(completed(0));
        assertThat(seen).hasSize(2);
    }

    @Test
    void should_forget_the_types_of_a_listener_when_its_subscription_is_closed() {
        Subscription s = events.subscribe(HedgeSent.class, e -> {});
        events.subscribe(CallCompleted.class, e -> {});

        s.close();
        s.close(); // idempotent

        assertThat(events.hasListeners(HedgeSent.class)).isFalse();
        assertThat(events.hasListeners(CallCompleted.class)).isTrue();
        assertThat(events.listenerCount()).isEqualTo(1);
    }

    @Test
    void should_want_no_call_completed_when_every_listener_declines_the_call() {
        Recorder slow = new Recorder(Set.of(CallCompleted.class), 100 * MS);
        Recorder slower = new Recorder(Set.of(CallCompleted.class), 200 * MS);
        events.subscribe(slow);
        events.subscribe(slower);
        events.subscribe(HedgeSent.class, e -> {});

        assertThat(events.wantsCallCompleted(CallOutcome.SUCCESS, 100 * MS - 1)).isFalse();
        assertThat(events.wantsCallCompleted(CallOutcome.SUCCESS, 100 * MS)).isTrue();
        assertThat(events.wantsCallCompleted(CallOutcome.FAILURE, 300 * MS)).isTrue();
    }

    @Test
    void should_deliver_call_completed_only_to_the_listeners_that_want_it_when_it_is_published() {
        Recorder slow = new Recorder(Set.of(CallCompleted.class), 100 * MS);
        Recorder slower = new Recorder(Set.of(CallCompleted.class), 200 * MS);
        events.subscribe(slow);
        events.subscribe(slower);

        events.publish(completed(50 * MS));
        events.publish(completed(150 * MS));
        events.publish(completed(250 * MS));

        assertThat(slow.seen).extracting(e -> ((CallCompleted) e).totalNanos()).containsExactly(150 * MS, 250 * MS);
        assertThat(slower.seen)
                .extracting(e -> ((CallCompleted) e).totalNanos())
                .containsExactly(250 * MS);
    }

    @Test
    void should_count_a_throwing_wants_call_completed_as_wanted_and_still_deliver_to_the_others_when_it_throws() {
        HedgeEventListener hostile = new HedgeEventListener() {
            @Override
            public boolean wantsCallCompleted(CallOutcome outcome, long totalNanos) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onEvent(HedgeEvent event) {
                throw new AssertionError("not delivered: its wantsCallCompleted threw");
            }
        };
        Recorder after = new Recorder(Set.of(CallCompleted.class), 0);
        events.subscribe(hostile);
        events.subscribe(after);

        assertThat(events.wantsCallCompleted(CallOutcome.SUCCESS, 0)).isTrue();
        events.publish(completed(1));

        assertThat(after.seen).hasSize(1);
    }

    @Test
    void should_reject_a_listener_when_it_declares_no_event_type() {
        HedgeEventListener none = new HedgeEventListener() {
            @Override
            public Set<Class<? extends HedgeEvent>> eventTypes() {
                return Set.of();
            }

            @Override
            public void onEvent(HedgeEvent event) {}
        };

        assertThatThrownBy(() -> events.subscribe(none))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("eventTypes")
                .hasMessageContaining("must not be empty, was []");
        assertThat(events.listenerCount()).isZero();
    }
}

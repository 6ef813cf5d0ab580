package io.github.hedge.core.micrometer;

import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.HedgeWon;
import io.github.hedge.core.event.NotHedged;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The meters of one {@link HedgeMetrics} in one registry: the definitions of the event counters,
 * the {@link CallMeters} per operation, and the list of every meter registered, so that closing
 * removes them all. Thread-safe: events are recorded without locks on pre-registered meters.
 */
final class MeterBinding {
    final MeterRegistry registry;
    /** The first part of every meter name. */
    private final String prefix;
    /** The tags of every meter: {@code name} and the user's extra tags. */
    final Tags commonTags;
    /** Whether {@code attempt.latency} publishes a percentile histogram. */
    final boolean percentileHistogram;

    private final List<Meter> meters = new ArrayList<>(); // guarded by this
    private boolean removed; // guarded by this

    final Counter[] hedgesSent;
    final Counter hedgesWon;
    final Counter budgetDenied;
    final Counter[] notHedged;
    final CallMeters untagged;
    final ConcurrentHashMap<String, CallMeters> byOperation;

    MeterBinding(
            MeterRegistry registry, String prefix, Tags commonTags, boolean percentileHistogram, boolean tagOperation) {
        this.registry = registry;
        this.prefix = prefix;
        this.commonTags = commonTags;
        this.percentileHistogram = percentileHistogram;
        HedgeSent.Reason[] sentReasons = HedgeSent.Reason.values();
        hedgesSent = new Counter[sentReasons.length];
        for (HedgeSent.Reason r : sentReasons) {
            hedgesSent[r.ordinal()] = counter(
                    "hedges.sent",
                    "hedges sent: extra attempts beyond the primary",
                    "hedges",
                    Tags.of(MeterTags.REASON, MeterTags.lower(r)));
        }
        hedgesWon = counter("hedges.won", "calls whose answer came from a hedge", "hedges", Tags.empty());
        budgetDenied = counter(
                "budget.denied",
                "hedges refused for good by the hedge budget (a hedge that waited and got a token is not one)",
                "hedges",
                Tags.empty());
        NotHedged.Reason[] notReasons = NotHedged.Reason.values();
        notHedged = new Counter[notReasons.length];
        for (NotHedged.Reason r : notReasons) {
            notHedged[r.ordinal()] = counter(
                    "not.hedged",
                    "calls, or further attempts of them, deliberately not hedged",
                    "calls",
                    Tags.of(MeterTags.REASON, MeterTags.lower(r)));
        }
        if (tagOperation) {
            untagged = null;
            byOperation = new ConcurrentHashMap<>();
        } else {
            untagged = new CallMeters(this, Tags.empty());
            byOperation = null;
        }
    }

    String meterName(String suffix) {
        return prefix + "." + suffix;
    }

    Counter counter(String suffix, String description, String unit, Tags tags) {
        return track(Counter.builder(meterName(suffix))
                .description(description)
                .baseUnit(unit)
                .tags(commonTags)
                .tags(tags)
                .register(registry));
    }

    Timer timer(String suffix, String description, Tags tags, boolean histogram) {
        return track(Timer.builder(meterName(suffix))
                .description(description)
                .tags(commonTags)
                .tags(tags)
                .publishPercentileHistogram(histogram)
                .register(registry));
    }

    /** Remembers a meter for removal; removes it at once if the binding was already closed. */
    synchronized <M extends Meter> M track(M meter) {
        if (removed) {
            registry.remove(meter);
        } else {
            meters.add(meter);
        }
        return meter;
    }

    synchronized void removeAll() {
        removed = true;
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
    }

    void record(HedgeEvent event) {
        if (event instanceof CallCompleted c) {
            callMeters(c.operation()).record(c);
        } else if (event instanceof HedgeSent s) {
            hedgesSent[s.reason().ordinal()].increment();
        } else if (event instanceof HedgeWon) {
            hedgesWon.increment();
        } else if (event instanceof BudgetExhausted) {
            budgetDenied.increment();
        } else if (event instanceof NotHedged n) {
            notHedged[n.reason().ordinal()].increment();
        }
        // AttemptStarted: counted from CallCompleted's trace, which adapters publish too
    }

    private CallMeters callMeters(String operation) {
        if (untagged != null) {
            return untagged;
        }
        String op = operation == null ? MeterTags.NO_OPERATION : operation;
        CallMeters m = byOperation.get(op);
        if (m != null) {
            return m;
        }
        // a new label: decided under the binding's monitor, so threads bringing new labels at
        // once cannot all pass the size check: at most MAX_OPERATIONS labels, plus "other"
        synchronized (this) {
            m = byOperation.get(op);
            if (m != null) {
                return m;
            }
            if (byOperation.size() >= MeterTags.MAX_OPERATIONS) {
                op = MeterTags.OTHER_OPERATION;
                m = byOperation.get(op);
                if (m != null) {
                    return m;
                }
            }
            m = new CallMeters(this, Tags.of(MeterTags.OPERATION, op));
            byOperation.put(op, m);
            return m;
        }
    }
}

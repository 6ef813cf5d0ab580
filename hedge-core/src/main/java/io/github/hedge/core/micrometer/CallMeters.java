package io.github.hedge.core.micrometer;

import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.CallCompleted;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * The meters fed by {@link CallCompleted}, for one registry and (optionally) one operation: calls
 * and call latency by outcome, attempts by outcome and kind, attempt latency by kind. Thread-safe.
 */
final class CallMeters {
    final Counter[] calls;
    final Counter[][] attempts; // [AttemptOutcome][kind]
    final Timer[] attemptLatency; // [kind]
    final Timer[] callLatency; // [CallOutcome]

    CallMeters(MeterBinding b, Tags tags) {
        CallCompleted.CallOutcome[] callOutcomes = CallCompleted.CallOutcome.values();
        calls = new Counter[callOutcomes.length];
        callLatency = new Timer[callOutcomes.length];
        for (CallCompleted.CallOutcome o : callOutcomes) {
            Tags t = tags.and(MeterTags.OUTCOME, MeterTags.lower(o));
            calls[o.ordinal()] = b.counter("calls", "hedged calls completed", "calls", t);
            callLatency[o.ordinal()] =
                    b.timer("call.latency", "total time of hedged calls, all attempts included", t, false);
        }
        AttemptRecord.AttemptOutcome[] attemptOutcomes = AttemptRecord.AttemptOutcome.values();
        attempts = new Counter[attemptOutcomes.length][MeterTags.KINDS.length];
        for (AttemptRecord.AttemptOutcome o : attemptOutcomes) {
            for (int k = 0; k < MeterTags.KINDS.length; k++) {
                attempts[o.ordinal()][k] = b.counter(
                        "attempts",
                        "attempts of completed hedged calls",
                        "attempts",
                        tags.and(MeterTags.OUTCOME, MeterTags.lower(o)).and(MeterTags.KIND, MeterTags.KINDS[k]));
            }
        }
        attemptLatency = new Timer[MeterTags.KINDS.length];
        for (int k = 0; k < MeterTags.KINDS.length; k++) {
            attemptLatency[k] = b.timer(
                    "attempt.latency",
                    "duration of each attempt until it completed or was cancelled",
                    tags.and(MeterTags.KIND, MeterTags.KINDS[k]),
                    b.percentileHistogram);
        }
    }

    void record(CallCompleted c) {
        int o = c.outcome().ordinal();
        calls[o].increment();
        if (c.totalNanos() >= 0) {
            callLatency[o].record(c.totalNanos(), TimeUnit.NANOSECONDS);
        }
        for (AttemptRecord a : c.attempts()) {
            int kind = a.attemptNumber() > 1 ? 1 : 0;
            attempts[a.outcome().ordinal()][kind].increment();
            if (a.durationNanos() >= 0) {
                attemptLatency[kind].record(a.durationNanos(), TimeUnit.NANOSECONDS);
            }
        }
    }
}

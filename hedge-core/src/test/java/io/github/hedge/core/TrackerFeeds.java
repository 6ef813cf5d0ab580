package io.github.hedge.core;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import java.time.Duration;

/** Latency histories the delay tests feed a tracker with. */
final class TrackerFeeds {
    private static final long MS = 1_000_000;

    private TrackerFeeds() {}

    /**
     * 2,000 samples per target, then past the tracker's next refresh: a and b answer after an
     * exponential latency, mean 10 ms; c the same, but 10% of its calls stall for 1 s.
     */
    static void oneOfThreeStalls(LatencyTracker tracker, VirtualTimeScheduler time) {
        for (int i = 0; i < 2000; i++) {
            long nanos = (long) (-10 * MS * Math.log(1 - (i + 0.5) / 2000));
            tracker.record("a", nanos);
            tracker.record("b", nanos);
            tracker.record("c", i % 10 == 0 ? 1000 * MS : nanos);
        }
        time.advance(Duration.ofSeconds(1));
    }
}

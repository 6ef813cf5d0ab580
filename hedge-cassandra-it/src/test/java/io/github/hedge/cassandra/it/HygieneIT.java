package io.github.hedge.cassandra.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.Gauge;
import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metrics.DefaultNodeMetric;
import com.datastax.oss.driver.api.core.metrics.NodeMetric;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.HedgeStats;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Resource hygiene under a long run: 100,000 requests through a hedged session from 16 threads,
 * with node 3's link slowed by 20-50 ms so that hedges fire and losers finish late. After a
 * quiet second, nothing is left over: no pending attempts, timers or in-flight calls in hedge, no
 * in-flight or orphaned stream in the driver, and no more threads than after the first 10,000.
 */
class HygieneIT {
    static final int REQUESTS = Integer.getInteger("hedge.it.hygieneRequests", 100_000);
    static final int WARM = REQUESTS / 10;
    static final int THREADS = 16;

    @Test
    void should_leave_no_threads_timers_attempts_or_streams_behind_after_100k_hedged_requests() throws Exception {
        Fixture f = Fixture.get();
        f.cluster.proxy().setDelay(20, 30);
        AtomicLong issued = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        int threadsWarm;
        HedgeStats stats;
        long orphaned;
        long inFlight;
        int threadsEnd;
        long started = System.nanoTime();
        try (HedgedCqlSession s = (HedgedCqlSession) Mode.HEDGE_WRAPPED.open(null)) {
            Fixture.waitAllUp(s);
            PreparedStatement read = s.prepare("SELECT v FROM ks.kv WHERE k = ?");
            AtomicLong limit = new AtomicLong(WARM);
            Runnable work = () -> {
                while (issued.incrementAndGet() <= limit.get()) {
                    try {
                        s.execute(read.bind(ThreadLocalRandom.current().nextInt(Workload.ROWS))
                                .setIdempotent(true)
                                .setConsistencyLevel(
                                        issued.get() % 2 == 0
                                                ? ConsistencyLevel.LOCAL_ONE
                                                : ConsistencyLevel.LOCAL_QUORUM));
                    } catch (RuntimeException e) {
                        failed.incrementAndGet();
                    }
                }
            };
            // the first 10% warm everything up (driver pools, hedge's scheduler, JIT)
            runThreads(work);
            threadsWarm = ManagementFactory.getThreadMXBean().getThreadCount();
            issued.set(WARM);
            limit.set(REQUESTS);
            runThreads(work);
            f.cluster.proxy().setDelay(0, 0);
            Thread.sleep(1500); // late losers arrive
            stats = s.executor().stats();
            orphaned = sum(s, DefaultNodeMetric.ORPHANED_STREAMS);
            inFlight = sum(s, DefaultNodeMetric.IN_FLIGHT);
            threadsEnd = ManagementFactory.getThreadMXBean().getThreadCount();
        } finally {
            f.cluster.proxy().setDelay(0, 0);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        Map<String, String> raw = new LinkedHashMap<>();
        raw.put("ran_at", Scenario.now());
        raw.put("requests", String.valueOf(REQUESTS));
        raw.put("seconds", String.format(java.util.Locale.ROOT, "%.0f", seconds));
        raw.put("failed", String.valueOf(failed.get()));
        raw.put("hedges_sent", String.valueOf(stats.hedgesSent()));
        raw.put("hedges_won", String.valueOf(stats.hedgesWon()));
        raw.put("budget_denied", String.valueOf(stats.budgetDenied()));
        raw.put("threads_warm", String.valueOf(threadsWarm));
        raw.put("threads_end", String.valueOf(threadsEnd));
        raw.put("pending_attempts", String.valueOf(stats.pendingAttempts()));
        raw.put("pending_timers", String.valueOf(stats.pendingTimers()));
        raw.put("in_flight_calls", String.valueOf(stats.inFlightCalls()));
        raw.put("driver_in_flight", String.valueOf(inFlight));
        raw.put("driver_orphaned", String.valueOf(orphaned));
        raw.put("stats", String.valueOf(stats));
        Files.createDirectories(Raw.DIR);
        Raw.writeProperties(Raw.DIR.resolve("hygiene.properties"), raw);
        Files.writeString(Report.DIR.resolve("hygiene.md"), Tables.hygiene(Raw.DIR));
        assertThat(stats.hedgesSent()).as("hedges were sent").isPositive();
        assertThat(stats.pendingAttempts()).as("pending attempts").isZero();
        assertThat(stats.pendingTimers()).as("pending timers").isZero();
        assertThat(stats.inFlightCalls()).as("in-flight calls").isZero();
        assertThat(inFlight).as("driver in-flight requests").isZero();
        assertThat(orphaned).as("driver orphaned stream ids").isZero();
        // the load threads are gone by now; 2 spare for a driver thread started lazily
        assertThat(threadsEnd).as("threads vs %d after warm-up", threadsWarm).isLessThanOrEqualTo(threadsWarm + 2);
        assertThat(failed.get()).as("failed requests").isZero();
    }

    private static void runThreads(Runnable work) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            Thread t = new Thread(work, "hygiene-" + i);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(Duration.ofMinutes(10).toMillis());
        }
    }

    private static long sum(HedgedCqlSession s, NodeMetric metric) {
        long total = 0;
        for (Node n : s.getMetadata().getNodes().values()) {
            Object m = s.getMetrics().flatMap(x -> x.getNodeMetric(n, metric)).orElse(null);
            if (m instanceof Gauge<?> g && g.getValue() instanceof Number v) {
                total += v.longValue();
            }
        }
        return total;
    }
}

package io.github.hedge.cassandra.it;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import com.datastax.oss.driver.api.core.specex.SpeculativeExecutionPolicy;
import io.github.hedge.cassandra.HedgeSpeculativeExecutionPolicy;
import io.github.hedge.cassandra.HedgedCqlSession;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * Steady load from several client threads: each thread runs the {@link Workload} mix synchronously
 * at its share of a fixed rate (a thread that falls behind goes on at once but does not catch up
 * in a burst), while timed events (faults) run on their own thread. Records every request's start,
 * end, kind and outcome.
 */
final class LoadRun {
    /**
     * One request: times in nanoseconds since the run started; {@code route} where its answer came
     * from ({@link Workload#route}), empty when unknown.
     */
    record Sample(long start, long end, Workload.Kind kind, long seq, String route, String error) {
        boolean ok() {
            return error == null;
        }

        double latencyMs() {
            return (end - start) / 1e6;
        }

        /** The consistency level the workload ran it at ({@link Workload#consistency}; LWTs at quorum). */
        String consistency() {
            return kind == Workload.Kind.LWT
                    ? "LOCAL_QUORUM"
                    : Workload.consistency(seq).name();
        }
    }

    final Mode mode;
    final Workload.Ledger ledger;
    final List<Sample> samples = new ArrayList<>();
    final Map<String, Long> events = new LinkedHashMap<>();
    final List<String> slowCalls = new ArrayList<>();
    /**
     * Pauses of the test JVM itself (its GC, the OS not scheduling it): {start, length} in
     * nanoseconds since the run started, each where a 1 ms sleep overslept by more than 1 ms.
     */
    final List<long[]> hiccups = new ArrayList<>();
    /** The wall clock at the run's start (ms since the epoch), to line samples up with GC logs. */
    long wallStartMillis;

    final long durationNanos;
    volatile long markedDownAt = -1;
    long hedgesSent;
    long calls;
    /** the delay the session would give a hedge at the moment of the "fault" event, ns; -1: none */
    volatile long hedgeDelayAtFault = -1;
    /**
     * The largest delay the session would give a hedge from the "fault" event until the "resume"
     * event (or the run's end), sampled every {@link #DELAY_SAMPLE_MS} ms, ns; -1: none. The delay
     * moves while a fault lasts, as the latencies it causes reach the estimate.
     */
    volatile long hedgeDelayMaxDuringFault = -1;

    /** How often the hedge delay is sampled while a fault lasts, ms. */
    static final long DELAY_SAMPLE_MS = 5;

    /** A run read back from its raw files ({@link Raw}): no ledger. */
    static LoadRun loaded(Mode mode, long durationNanos) {
        return new LoadRun(mode, null, durationNanos);
    }

    private LoadRun(Mode mode, Workload.Ledger ledger, long durationNanos) {
        this.mode = mode;
        this.ledger = ledger;
        this.durationNanos = durationNanos;
    }

    /** A timed action during a run. */
    record Event(String name, Duration at, Runnable action) {}

    /** client threads running idempotent statements (reads, inserts) */
    static final int THREADS = 8;
    /** client threads running non-idempotent statements (counters, LWTs) */
    static final int NON_IDEMPOTENT_THREADS = 2;
    /** idempotent requests per second, all threads together */
    static final double RATE = Double.parseDouble(System.getProperty("hedge.it.rate", "180"));
    /** non-idempotent requests per second */
    static final double NON_IDEMPOTENT_RATE = 20;

    /**
     * Runs the load for {@code duration} at {@link #RATE} requests/s from {@link #THREADS}
     * threads, runs the events at their times, and watches when the driver marks {@code watchNode}
     * down (0: none).
     */
    static LoadRun run(
            Mode mode, CqlSession session, String runId, Duration duration, int watchNode, List<Event> timeline) {
        return run(mode, session, "kv", runId, duration, watchNode, timeline);
    }

    /** As {@link #run(Mode, CqlSession, String, Duration, int, List)}, reading {@code ks.<readTable>}. */
    static LoadRun run(
            Mode mode,
            CqlSession session,
            String readTable,
            String runId,
            Duration duration,
            int watchNode,
            List<Event> timeline) {
        Workload workload = new Workload(session, readTable);
        LoadRun run = new LoadRun(mode, new Workload.Ledger(runId), duration.toNanos());
        long policySentBefore = policySent(session);
        Queue<Sample> out = new ConcurrentLinkedQueue<>();
        long t0 = System.nanoTime();
        run.wallStartMillis = System.currentTimeMillis();
        long end = t0 + duration.toNanos();
        Queue<long[]> hiccups = new ConcurrentLinkedQueue<>();
        Thread meter = hiccupMeter(t0, end, hiccups);
        ScheduledExecutorService events = Executors.newSingleThreadScheduledExecutor();
        for (Event e : timeline) {
            events.schedule(
                    () -> {
                        if (e.name().equals("fault")) {
                            run.hedgeDelayAtFault = hedgeDelayNanos(mode, session);
                            run.hedgeDelayMaxDuringFault = run.hedgeDelayAtFault;
                        }
                        run.events.put(e.name(), System.nanoTime() - t0);
                        e.action().run();
                    },
                    e.at().toNanos(),
                    TimeUnit.NANOSECONDS);
        }
        if (timeline.stream().anyMatch(e -> e.name().equals("fault"))) {
            events.scheduleAtFixedRate(
                    () -> {
                        if (run.events.containsKey("fault") && !run.events.containsKey("resume")) {
                            run.hedgeDelayMaxDuringFault =
                                    Math.max(run.hedgeDelayMaxDuringFault, hedgeDelayNanos(mode, session));
                        }
                    },
                    DELAY_SAMPLE_MS,
                    DELAY_SAMPLE_MS,
                    TimeUnit.MILLISECONDS);
        }
        if (watchNode > 0) {
            InetSocketAddress watched = new InetSocketAddress(RealCluster.clientIp(watchNode), 9042);
            events.scheduleAtFixedRate(
                    () -> {
                        if (run.markedDownAt < 0 && run.events.containsKey("fault")) {
                            for (Node n : session.getMetadata().getNodes().values()) {
                                if (watched.equals(n.getEndPoint().resolve()) && n.getState() == NodeState.DOWN) {
                                    run.markedDownAt = System.nanoTime() - t0;
                                }
                            }
                        }
                    },
                    10,
                    10,
                    TimeUnit.MILLISECONDS);
        }
        // a trace of hedge's slow calls (attempts, targets, timings) next to the report, to explain them
        Queue<String> slowCalls = new ConcurrentLinkedQueue<>();
        io.github.hedge.core.event.Subscription sub = session instanceof HedgedCqlSession h
                ? h.executor().events().subscribe(io.github.hedge.core.event.CallCompleted.class, e -> {
                    if (e.totalNanos() > 50_000_000L) {
                        slowCalls.add(String.format(
                                java.util.Locale.ROOT,
                                "%.3f s %s %.1f ms won=%d %s",
                                (System.nanoTime() - t0) / 1e9,
                                e.outcome(),
                                e.totalNanos() / 1e6,
                                e.winningAttempt(),
                                e.attempts()));
                    }
                })
                : null;
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS + NON_IDEMPOTENT_THREADS; t++) {
            int thread = t;
            boolean idempotent = t < THREADS;
            long interval = idempotent
                    ? (long) (1e9 * THREADS / RATE)
                    : (long) (1e9 * NON_IDEMPOTENT_THREADS / NON_IDEMPOTENT_RATE);
            Thread th = new Thread(
                    () -> {
                        long next = t0 + thread * interval / (THREADS + NON_IDEMPOTENT_THREADS);
                        long seq = 0;
                        while (true) {
                            long now = System.nanoTime();
                            if (next > now) {
                                LockSupport.parkNanos(next - now);
                            }
                            long start = System.nanoTime();
                            if (start >= end) {
                                return;
                            }
                            Workload.Kind kind;
                            String error = null;
                            long mySeq = seq++;
                            try {
                                kind = workload.next(run.ledger, thread, mySeq, idempotent);
                            } catch (RuntimeException e) {
                                error = e.getClass().getSimpleName() + ": " + e.getMessage();
                                kind = guessKind(e);
                            }
                            long done = System.nanoTime();
                            out.add(new Sample(start - t0, done - t0, kind, mySeq, workload.takeRoute(), error));
                            next = Math.max(next + interval, done);
                        }
                    },
                    "load-" + t);
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            try {
                th.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        events.shutdownNow();
        try {
            meter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        run.hiccups.addAll(hiccups);
        if (sub != null) {
            sub.close();
            run.slowCalls.addAll(slowCalls);
            run.slowCalls.add(
                    "stats: " + ((HedgedCqlSession) session).executor().stats());
        }
        run.samples.addAll(out);
        run.samples.sort((a, b) -> Long.compare(a.start(), b.start()));
        if (session instanceof HedgedCqlSession h) {
            run.hedgesSent = h.executor().stats().hedgesSent();
            run.calls = h.executor().stats().calls();
        } else {
            // the driver counts a speculative execution when its timer fires, also when the hedge
            // policy's budget then refuses it (the plan ends): the policy counts what went out
            run.hedgesSent =
                    policySentBefore >= 0 ? policySent(session) - policySentBefore : run.ledger.speculative.get();
            run.calls = run.samples.stream().filter(s -> s.kind().idempotent()).count();
        }
        return run;
    }

    /**
     * @return the delay after which the session would send a call's first hedge now, in
     *     nanoseconds: hedge's current estimate (wrapped session, driver policy) or the constant
     *     policy's delay; -1 without hedging
     */
    static long hedgeDelayNanos(Mode mode, CqlSession session) {
        if (session instanceof HedgedCqlSession h) {
            return h.executor().currentDelayNanos();
        }
        for (SpeculativeExecutionPolicy p :
                session.getContext().getSpeculativeExecutionPolicies().values()) {
            if (p instanceof HedgeSpeculativeExecutionPolicy h) {
                return h.delayPolicy()
                        .delayNanos(io.github.hedge.core.DelayContext.of(2, List.of(), h.latencyTracker()));
            }
        }
        if (mode == Mode.CONSTANT) {
            return session.getContext()
                    .getConfig()
                    .getDefaultProfile()
                    .getDuration(
                            com.datastax.oss.driver.api.core.config.DefaultDriverOption.SPECULATIVE_EXECUTION_DELAY)
                    .toNanos();
        }
        return -1;
    }

    /** @return speculative executions sent by the session's hedge policies so far; -1 if it has none */
    private static long policySent(CqlSession session) {
        long sent = -1;
        for (SpeculativeExecutionPolicy p :
                session.getContext().getSpeculativeExecutionPolicies().values()) {
            if (p instanceof HedgeSpeculativeExecutionPolicy h) {
                sent = Math.max(sent, 0) + h.stats().sent();
            }
        }
        return sent;
    }

    /**
     * A jHiccup-like meter: sleeps 1 ms at a time until {@code end} and records every sleep that
     * overslept by more than 1 ms, i.e. a moment when no thread of the test JVM could have run.
     */
    private static Thread hiccupMeter(long t0, long end, Queue<long[]> out) {
        Thread th = new Thread(
                () -> {
                    long before = System.nanoTime();
                    while (before < end) {
                        LockSupport.parkNanos(1_000_000L);
                        long after = System.nanoTime();
                        long over = after - before - 1_000_000L;
                        if (over > 1_000_000L) {
                            out.add(new long[] {before + 1_000_000L - t0, over});
                        }
                        before = after;
                    }
                },
                "hiccup-meter");
        th.setDaemon(true);
        th.start();
        return th;
    }

    /** The test JVM's pauses during the run, as CSV: start in ms since the run started, length in ms. */
    String hiccupsCsv() {
        StringBuilder b = new StringBuilder(
                "# run started at " + java.time.Instant.ofEpochMilli(wallStartMillis) + "\nstart_ms,pause_ms\n");
        for (long[] h : hiccups) {
            b.append(String.format(java.util.Locale.ROOT, "%.3f,%.3f%n", h[0] / 1e6, h[1] / 1e6));
        }
        return b.toString();
    }

    // a failed statement's kind is not returned; the ledger counted it, the sample only needs to
    // say whether it could have been hedged: the exception's statement is not at hand, so failures
    // are attributed by the workload (see Workload.next) and counted here as "unknown" idempotent
    private static Workload.Kind guessKind(RuntimeException e) {
        Throwable t = e;
        while (t != null) {
            if (t instanceof KindException k) {
                return k.kind;
            }
            t = t.getCause();
        }
        return Workload.Kind.READ;
    }

    /** Wraps a driver failure with the kind of statement that failed. */
    static final class KindException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient Workload.Kind kind;

        KindException(Workload.Kind kind, RuntimeException cause) {
            super(cause.getClass().getSimpleName() + ": " + cause.getMessage(), cause);
            this.kind = kind;
        }
    }

    long at(String event) {
        Long at = events.get(event);
        if (at == null) {
            throw new IllegalStateException("event " + event + " did not happen");
        }
        return at;
    }

    /** Successful idempotent completions per whole second of the run. */
    int[] throughputPerSecond() {
        int[] perSecond = new int[(int) (durationNanos / 1_000_000_000L) + 1];
        for (Sample s : samples) {
            if (s.ok() && s.kind().idempotent()) {
                perSecond[(int) Math.min(perSecond.length - 1, s.end() / 1_000_000_000L)]++;
            }
        }
        return Arrays.copyOf(perSecond, perSecond.length - 1);
    }

    /** Median of the per-second throughput in [fromSec, toSec). */
    double steadyRate(int fromSec, int toSec) {
        int[] t = Arrays.copyOfRange(throughputPerSecond(), fromSec, toSec);
        Arrays.sort(t);
        return t[t.length / 2];
    }

    /** Samples that started in [fromNanos, toNanos) and match. */
    List<Sample> window(long fromNanos, long toNanos, Predicate<Sample> filter) {
        List<Sample> l = new ArrayList<>();
        for (Sample s : samples) {
            if (s.start() >= fromNanos && s.start() < toNanos && filter.test(s)) {
                l.add(s);
            }
        }
        return l;
    }

    static double percentileMs(List<Sample> samples, double p) {
        if (samples.isEmpty()) {
            return Double.NaN;
        }
        double[] l = samples.stream().mapToDouble(Sample::latencyMs).sorted().toArray();
        return l[Math.min(l.length - 1, (int) Math.ceil(p * l.length) - 1)];
    }

    static double maxMs(List<Sample> samples) {
        return samples.stream().mapToDouble(Sample::latencyMs).max().orElse(Double.NaN);
    }

    /** Per-second p99 latency (ms) of the idempotent requests started in each second. */
    double[] p99PerSecond() {
        int seconds = (int) (durationNanos / 1_000_000_000L);
        double[] out = new double[seconds];
        for (int s = 0; s < seconds; s++) {
            out[s] = percentileMs(
                    window(s * 1_000_000_000L, (s + 1) * 1_000_000_000L, x -> x.kind()
                            .idempotent()),
                    0.99);
        }
        return out;
    }

    long failures(Predicate<Sample> filter) {
        return samples.stream().filter(s -> !s.ok() && filter.test(s)).count();
    }

    /** Every sample as CSV: start and end in ms since the run started, kind, consistency, error. */
    String csv() {
        StringBuilder b = new StringBuilder("start_ms,end_ms,latency_ms,kind,cl,ok,error\n");
        for (Sample s : samples) {
            b.append(String.format(
                    java.util.Locale.ROOT,
                    "%.3f,%.3f,%.3f,%s,%s,%s,%s%n",
                    s.start() / 1e6,
                    s.end() / 1e6,
                    s.latencyMs(),
                    s.kind(),
                    s.consistency(),
                    s.ok(),
                    s.ok() ? "" : s.error().replace(',', ';').replace('\n', ' ')));
        }
        return b.toString();
    }

    double extraLoad() {
        return calls == 0 ? 0 : (double) hedgesSent / calls;
    }
}

package io.github.hedge.benchmarks.http;

import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeEventListener;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.http.HedgingExchangeFilterFunction;
import io.github.hedge.http.HttpHedgePolicy;
import io.github.hedge.http.StaticInstanceChooser;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * A hedged {@code WebClient} ({@code HedgingExchangeFilterFunction} with hedge-core's defaults:
 * adaptive p95 delay, 5% budget, two attempts, a {@code StaticInstanceChooser} over two instances)
 * next to no hedging and next to a hand-written hedge, {@code Mono.firstWithValue(call(a),
 * Mono.delay(d).then(call(b)))} with a fixed delay {@code d}, on two real Reactor Netty servers on
 * 127.0.0.1. Wall-clock time: the figures include the loopback, the client and the timers.
 *
 * <p>Each server answers each request after a latency drawn at the server: 1-3 ms (uniform) with
 * probability 0.97, else 20-80 ms (uniform), independently per request. Attempts are counted at the
 * servers. Before any measured run, one unmeasured run of each mode (hedge on a throwaway executor)
 * warms the JVM, the connections and the servers; the measured hedge then starts on a new executor,
 * so its first calls show the executor's cold start, not the JVM's. The fixed delay {@code d} is chosen in hindsight, as the other side-by-sides do: starting at
 * the no-hedging run's quantile of hedge's measured extra load (after the cold calls), it moves in
 * 0.5 ms steps until the measured extra load crosses hedge's, then halves the bracket three times;
 * the delay reported is the largest whose measured extra load was not below hedge's, so hedge is
 * compared at equal or lower extra load. Each try is a full run, printed on stderr. Calls arrive every {@code
 * 1/--rate} s (open loop). The first {@code --cold-calls} calls of each mode are reported apart (cold
 * start), pooled over {@code --cold-runs} runs: the measured run's first calls and as many more runs
 * of {@code --cold-calls} calls as it takes, taken in turn (no hedging, hedge on a new executor each
 * time, the fixed delay {@code d}), so a cold p99.9 is not one run's slowest call or two. For hedge's calls over 10 ms, the report says why the hedge did not save them: no hedge
 * (with the executor's reason), a hedge sent late, a hedge that also stalled, or a hedge on the
 * primary's instance. Prints a Markdown report.
 *
 * <pre>
 * java -cp hedge-benchmarks/target/hedge-sim.jar io.github.hedge.benchmarks.http.HttpSideBySide \
 *     [--calls 10000] [--rate 500] [--cold-calls 2000] [--cold-runs 8] [--seed 1]
 * </pre>
 */
public final class HttpSideBySide {
    private static final double STALL_P = 0.03;
    private final int calls;
    private final int coldCalls;
    private final int coldRuns;
    private final long intervalNanos;
    private final long seed;
    private final AtomicLong attempts = new AtomicLong();
    private final List<DisposableServer> servers = new ArrayList<>();
    private Diagnosis diagnosis;

    private HttpSideBySide(int calls, int coldCalls, int coldRuns, double rate, long seed) {
        this.calls = calls;
        this.coldCalls = coldCalls;
        this.coldRuns = coldRuns;
        this.intervalNanos = (long) (1e9 / rate);
        this.seed = seed;
    }

    /** What one mode measured: {@code coldN} calls in {@code cold}, the others in {@code warm}. */
    record Result(String mode, Histogram cold, Histogram warm, long coldN, long coldAttempts, long warmAttempts) {
        /** This result with {@code more}'s cold calls (a run of cold calls only) added to its own. */
        Result withCold(Result more) {
            Histogram c = cold.copy();
            c.add(more.cold);
            return new Result(mode, c, warm, coldN + more.coldN, coldAttempts + more.coldAttempts, warmAttempts);
        }
    }

    private interface Mode {
        Mono<String> call(int i);
    }

    /** @return the latency distribution's quantile at {@code q}, in nanoseconds */
    static long quantileNanos(double q) {
        double ms;
        if (q <= 1 - STALL_P) {
            ms = 1 + 2 * q / (1 - STALL_P);
        } else {
            ms = 20 + 60 * (q - (1 - STALL_P)) / STALL_P;
        }
        return (long) (ms * 1e6);
    }

    private DisposableServer server(long serverSeed) {
        SplittableRandom random = new SplittableRandom(serverSeed);
        DisposableServer s = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((req, res) -> {
                    attempts.incrementAndGet();
                    double ms;
                    synchronized (random) {
                        ms = random.nextDouble() < STALL_P
                                ? 20 + 60 * random.nextDouble()
                                : 1 + 2 * random.nextDouble();
                    }
                    return res.sendString(
                            Mono.delay(Duration.ofNanos((long) (ms * 1e6))).thenReturn("ok"));
                })
                .bindNow();
        servers.add(s);
        return s;
    }

    private Result run(String name, Mode mode) throws InterruptedException {
        return run(name, mode, calls);
    }

    /** Runs {@code calls} calls of {@code mode}; the first {@link #coldCalls} are the cold ones. */
    private Result run(String name, Mode mode, int calls) throws InterruptedException {
        Histogram cold = new ConcurrentHistogram(60_000_000_000L, 3);
        Histogram warm = new ConcurrentHistogram(60_000_000_000L, 3);
        CountDownLatch done = new CountDownLatch(calls);
        long coldAttempts = 0;
        attempts.set(0);
        long start = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            long due = start + i * intervalNanos;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
            if (i == coldCalls) {
                coldAttempts = attempts.get();
            }
            Histogram h = i < coldCalls ? cold : warm;
            long t0 = System.nanoTime();
            mode.call(i)
                    .subscribe(
                            v -> {},
                            e -> {
                                h.recordValue(System.nanoTime() - t0);
                                done.countDown();
                            },
                            () -> {
                                h.recordValue(System.nanoTime() - t0);
                                done.countDown();
                            });
        }
        done.await();
        if (calls <= coldCalls) {
            coldAttempts = attempts.get();
        }
        return new Result(name, cold, warm, Math.min(calls, coldCalls), coldAttempts, attempts.get() - coldAttempts);
    }

    private void go() throws InterruptedException {
        URI a = URI.create("http://127.0.0.1:" + server(seed).port());
        URI b = URI.create("http://127.0.0.1:" + server(seed + 1).port());
        HttpClient netty = HttpClient.create();
        WebClient plain = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(netty))
                .build();
        AtomicInteger rr = new AtomicInteger();
        StaticInstanceChooser chooser =
                StaticInstanceChooser.builder().service("svc", List.of(a, b)).build();

        // Warm the JVM, its JIT, the connection pool and the servers on every code path the modes use,
        // with a throwaway hedged client of its own executor, so that each mode's first calls measure
        // what is new in that mode: for hedge, a new executor (its delay and its budget); no hedging and
        // the fixed delay have no state to warm.
        HedgedExecutor throwaway = HedgedExecutor.of("http-bench-warm-up", HedgeConfig.ofDefaults());
        WebClient warmHedged = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(netty))
                .filter(HedgingExchangeFilterFunction.of(throwaway, HttpHedgePolicy.defaults(), chooser))
                .build();
        // one unmeasured run of every mode, each of --calls calls
        Mode unhedged = i -> plain.get()
                .uri((rr.getAndIncrement() % 2 == 0 ? a : b) + "/x")
                .retrieve()
                .bodyToMono(String.class);
        run("warm-up, no hedging", unhedged);
        run(
                "warm-up, hedge",
                i -> warmHedged.get().uri("http://svc/x").retrieve().bodyToMono(String.class));
        run("warm-up, fixed", fixed(plain, a, b, rr, quantileNanos(0.95)));

        Result none = run("no hedging", unhedged);

        HedgedExecutor executor = HedgedExecutor.of("http-bench", HedgeConfig.ofDefaults());
        diagnosis = new Diagnosis(coldCalls);
        executor.events().subscribe(diagnosis);
        WebClient hedged = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(netty))
                .filter(HedgingExchangeFilterFunction.of(executor, HttpHedgePolicy.defaults(), chooser))
                .build();
        Result hedge = run(
                "hedge (p95 adaptive, 5% budget)",
                i -> hedged.get().uri("http://svc/x").retrieve().bodyToMono(String.class));
        diagnosis.finish();

        double extra = extra(hedge);
        // the largest fixed delay whose extra load is not below hedge's, so hedge is compared at equal
        // or lower extra load: from the no-hedging run's quantile of hedge's extra load, 0.5 ms steps
        // until the measured extra load crosses hedge's, then three halvings of the bracket (to
        // 1/16 ms). Every try is a full run; the one reported is the largest delay measured at or above
        // hedge's extra load.
        long step = 500_000;
        long d = Math.max(step, none.warm.getValueAtPercentile(100 * (1 - Math.max(extra, 1e-4))) / step * step);
        Result above = null;
        long aboveDelay = -1;
        long below = -1; // the smallest delay measured below hedge's extra load
        for (int tries = 0; tries < 12 && d > 0; tries++) {
            Result r = run(fixedName(d), fixed(plain, a, b, rr, d));
            boolean atOrAbove = extra(r) >= extra;
            System.err.printf(
                    Locale.ROOT,
                    "fixed %.4f ms: extra load %.2f%% (hedge %.2f%%)%n",
                    d / 1e6,
                    100 * extra(r),
                    100 * extra);
            if (atOrAbove && d > aboveDelay) {
                above = r;
                aboveDelay = d;
            } else if (!atOrAbove && (below < 0 || d < below)) {
                below = d;
            }
            if (aboveDelay < 0) {
                d -= step; // not yet at hedge's load: shorter delays hedge more
            } else if (below < 0) {
                d += step; // at or above: try longer delays until one falls below
            } else if (below - aboveDelay > step / 8) {
                d = (aboveDelay + below) / 2; // bisect the bracket
            } else {
                break;
            }
        }
        long fixedDelay = above != null ? aboveDelay : step / 8;
        Result fixed = above != null ? above : run(fixedName(fixedDelay), fixed(plain, a, b, rr, fixedDelay));
        // more cold starts, the modes in turn: hedge on a new executor each time
        for (int k = 1; k < coldRuns; k++) {
            none = none.withCold(run("cold run " + (k + 1) + ", no hedging", unhedged, coldCalls));
            HedgedExecutor fresh = HedgedExecutor.of("http-bench-cold-" + k, HedgeConfig.ofDefaults());
            WebClient freshClient = WebClient.builder()
                    .clientConnector(new ReactorClientHttpConnector(netty))
                    .filter(HedgingExchangeFilterFunction.of(fresh, HttpHedgePolicy.defaults(), chooser))
                    .build();
            hedge = hedge.withCold(run(
                    "cold run " + (k + 1) + ", hedge",
                    i -> freshClient.get().uri("http://svc/x").retrieve().bodyToMono(String.class),
                    coldCalls));
            fixed = fixed.withCold(run(
                    "cold run " + (k + 1) + ", " + fixedName(fixedDelay),
                    fixed(plain, a, b, rr, fixedDelay),
                    coldCalls));
        }

        String header = "| mode | p50 ms | p99 ms | p99.9 ms | max ms | extra load |\n|---|---|---|---|---|---|";
        System.out.printf(
                "Two Reactor Netty servers on 127.0.0.1, each request 1-3 ms (p=0.97) or 20-80 ms (p=0.03);"
                        + " %d calls per mode at %.0f calls/s, seed %d.%n%n",
                calls, 1e9 / intervalNanos, seed);
        System.out.printf("After the first %d calls (%d calls):%n%n%s%n", coldCalls, calls - coldCalls, header);
        for (Result r : List.of(none, hedge, fixed)) {
            System.out.println(row(r.mode, r.warm, r.warmAttempts, calls - coldCalls));
        }
        System.out.printf(
                "%nCold start, the first %d calls of %d runs (%d calls):%n%n%s%n",
                coldCalls, coldRuns, hedge.coldN, header);
        for (Result r : List.of(none, hedge, fixed)) {
            System.out.println(row(r.mode, r.cold, r.coldAttempts, r.coldN));
        }
        System.out.printf(
                "%nHedge's calls over 10 ms after the first %d calls (%d), by why the hedge did not save them:%n%n",
                coldCalls, diagnosis.slow);
        System.out.println("| cause | calls |\n|---|---|");
        diagnosis.causes.forEach((cause, n) -> System.out.printf("| %s | %d |%n", cause, n.get()));
        System.out.printf("%nThe same for the first %d calls (%d):%n%n", coldCalls, diagnosis.coldSlow);
        System.out.println("| cause | calls |\n|---|---|");
        diagnosis.coldCauses.forEach((cause, n) -> System.out.printf("| %s | %d |%n", cause, n.get()));
        System.out.printf(
                Locale.ROOT,
                "%nHedge's delay after the first %d calls (HedgeSent): p50 %.2f ms, p99 %.2f ms, max %.2f ms;"
                        + " not hedged: %s.%n",
                coldCalls,
                diagnosis.delays.getValueAtPercentile(50) / 1e6,
                diagnosis.delays.getValueAtPercentile(99) / 1e6,
                diagnosis.delays.getMaxValue() / 1e6,
                diagnosis.notHedged);
        servers.forEach(DisposableServer::disposeNow);
    }

    private double extra(Result r) {
        return (double) r.warmAttempts / (calls - coldCalls) - 1;
    }

    private static String fixedName(long d) {
        return String.format(Locale.ROOT, "hand-written fixed %.3f ms (hindsight)", d / 1e6);
    }

    private static Mode fixed(WebClient plain, URI a, URI b, AtomicInteger rr, long d) {
        return i -> {
            boolean first = rr.getAndIncrement() % 2 == 0;
            URI p = first ? a : b;
            URI h = first ? b : a;
            return Mono.firstWithValue(
                    plain.get().uri(p + "/x").retrieve().bodyToMono(String.class),
                    Mono.delay(Duration.ofNanos(d), Schedulers.parallel())
                            .then(plain.get().uri(h + "/x").retrieve().bodyToMono(String.class)));
        };
    }

    /**
     * Why hedge's slow calls (over 10 ms) after the cold calls were not saved, from the executor's
     * events. Calls are numbered by their ids' order, which is their start order.
     */
    private static final class Diagnosis implements HedgeEventListener {
        private static final long SLOW_NANOS = 10_000_000;
        private final int coldCalls;
        private final Map<Long, NotHedged.Reason> declined = new ConcurrentHashMap<>();
        private final Map<Long, CallCompleted> slowCalls = new ConcurrentHashMap<>();
        private final Map<Long, Long> hedgeDelays = new ConcurrentHashMap<>();
        private final AtomicLong firstId = new AtomicLong(Long.MAX_VALUE);
        final Map<String, AtomicInteger> causes = new java.util.TreeMap<>();
        final Map<String, AtomicInteger> coldCauses = new java.util.TreeMap<>();
        final Histogram delays = new ConcurrentHistogram(60_000_000_000L, 3);
        final Map<NotHedged.Reason, AtomicInteger> notHedged = new java.util.TreeMap<>();
        int slow;
        int coldSlow;

        Diagnosis(int coldCalls) {
            this.coldCalls = coldCalls;
        }

        @Override
        public void onEvent(HedgeEvent event) {
            firstId.accumulateAndGet(event.callId(), Math::min);
            if (event instanceof NotHedged n) {
                declined.put(n.callId(), n.reason());
            } else if (event instanceof HedgeSent h) {
                hedgeDelays.put(h.callId(), h.delayNanos());
            } else if (event instanceof CallCompleted c && c.totalNanos() > SLOW_NANOS) {
                slowCalls.put(c.callId(), c);
            }
        }

        /** Classifies, once every call has ended. */
        void finish() {
            long base = firstId.get();
            hedgeDelays.forEach((id, d) -> {
                if (id - base >= coldCalls) {
                    delays.recordValue(d);
                }
            });
            declined.forEach((id, r) -> {
                if (id - base >= coldCalls) {
                    synchronized (notHedged) {
                        notHedged.computeIfAbsent(r, k -> new AtomicInteger()).incrementAndGet();
                    }
                }
            });
            for (CallCompleted c : slowCalls.values()) {
                boolean cold = c.callId() - base < coldCalls;
                if (cold) {
                    coldSlow++;
                } else {
                    slow++;
                }
                (cold ? coldCauses : causes)
                        .computeIfAbsent(cause(c), k -> new AtomicInteger())
                        .incrementAndGet();
            }
        }

        private String cause(CallCompleted c) {
            if (c.attempts().size() < 2) {
                NotHedged.Reason r = declined.get(c.callId());
                return "no hedge: " + (r == null ? "none sent before the primary answered" : r.name());
            }
            AttemptRecord primary = c.attempts().get(0);
            AttemptRecord hedge = c.attempts().get(1);
            if (primary.target() != null && primary.target().equals(hedge.target())) {
                return "hedge on the primary's instance";
            }
            if (hedge.startOffsetNanos() > SLOW_NANOS) {
                return "hedge sent after 10 ms";
            }
            if (hedge.startOffsetNanos() + hedge.durationNanos() > SLOW_NANOS) {
                return "hedge sent in time, also over 10 ms";
            }
            return "other (both answered in time, call slow)";
        }
    }

    private static String row(String mode, Histogram h, long attempts, long n) {
        return String.format(
                Locale.ROOT,
                "| %s | %.2f | %.2f | %.2f | %.2f | %.2f%% |",
                mode,
                h.getValueAtPercentile(50) / 1e6,
                h.getValueAtPercentile(99) / 1e6,
                h.getValueAtPercentile(99.9) / 1e6,
                h.getMaxValue() / 1e6,
                100.0 * ((double) attempts / n - 1));
    }

    /**
     * @param args {@code --calls N --rate R --cold-calls C --cold-runs K --seed S}
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        int calls = 10_000;
        double rate = 500;
        int cold = 2_000;
        int coldRuns = 8;
        long seed = 1;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--calls" -> calls = Integer.parseInt(args[i + 1]);
                case "--rate" -> rate = Double.parseDouble(args[i + 1]);
                case "--cold-calls" -> cold = Integer.parseInt(args[i + 1]);
                case "--cold-runs" -> coldRuns = Integer.parseInt(args[i + 1]);
                case "--seed" -> seed = Long.parseLong(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (cold < 0 || cold >= calls) {
            throw new IllegalArgumentException("--cold-calls must be in [0, --calls), was " + cold);
        }
        if (coldRuns < 1 || coldRuns > 100) {
            throw new IllegalArgumentException("--cold-runs must be in [1, 100], was " + coldRuns);
        }
        new HttpSideBySide(calls, cold, coldRuns, rate, seed).go();
    }
}

package io.github.hedge.benchmarks.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.BudgetExhausted;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.core.event.HedgeEvent;
import io.github.hedge.core.event.HedgeSent;
import io.github.hedge.core.event.NotHedged;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The seed scenario's cold wrapped session, traced: {@code sessions} new wrapped sessions (defaults)
 * each run {@code inserts} sequential INSERTs while node 1 answers 250 ms late; every insert slower
 * than 100 ms is printed with the delay the executor would have given it when it started (and that
 * delay's source), the budget's state, and the events of the call (hedges sent with reason and
 * delay, refusals, the attempts).
 *
 * <p>Usage: {@code SeedTrace [sessions=10] [inserts=1000] [slowMs=250]}. Prints to stdout.
 */
public final class SeedTrace {
    private SeedTrace() {}

    /**
     * @param args sessions, inserts, slow node's delay in ms
     * @throws Exception if the cluster cannot start
     */
    public static void main(String[] args) throws Exception {
        int sessions = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int inserts = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        long slowMs = args.length > 2 ? Long.parseLong(args[2]) : 250;
        int slowCalls = 0;
        try (SimulatedCluster cluster = new SimulatedCluster(3)) {
            cluster.delays(SimulatedCluster.INSERT, 0, 0, 0);
            try (CqlSession warmUp = cluster.session(b -> b)) { // the JIT warm, as SeedScenario
                HedgedCqlSession w = HedgedCqlSession.wrap(warmUp);
                Random r = new Random(7);
                for (int i = 0; i < inserts; i++) {
                    w.execute(SimulatedCluster.insert(r.nextInt(), r.nextInt(10000)));
                }
            }
            cluster.delays(SimulatedCluster.INSERT, slowMs, 0, 0);
            for (int s = 0; s < sessions; s++) {
                try (CqlSession driver = cluster.session(b -> b)) {
                    HedgedCqlSession session = HedgedCqlSession.wrap(driver);
                    HedgedExecutor executor = session.executor();
                    List<HedgeEvent> events = new ArrayList<>();
                    executor.events().subscribe(HedgeSent.class, e -> add(events, e));
                    executor.events().subscribe(NotHedged.class, e -> add(events, e));
                    executor.events().subscribe(BudgetExhausted.class, e -> add(events, e));
                    executor.events().subscribe(CallCompleted.class, e -> add(events, e));
                    Random random = new Random(42 + s);
                    int slowHere = 0;
                    for (int i = 0; i < inserts; i++) {
                        synchronized (events) {
                            events.clear();
                        }
                        long delay = executor.currentDelayNanos();
                        String source = String.valueOf(executor.currentDelaySource());
                        String budget = executor.budget().toString();
                        long t0 = System.nanoTime();
                        session.execute(SimulatedCluster.insert(random.nextInt(), random.nextInt(10000)));
                        long ms = (System.nanoTime() - t0) / 1_000_000;
                        if (ms >= 100) {
                            slowHere++;
                            System.out.printf(
                                    Locale.ROOT,
                                    "session %d insert %d: %d ms; delay at its start %s (%s); budget %s%n",
                                    s,
                                    i,
                                    ms,
                                    delay == io.github.hedge.core.DelayPolicy.NO_HEDGE
                                            ? "none"
                                            : String.format(Locale.ROOT, "%.2f ms", delay / 1e6),
                                    source,
                                    budget);
                            synchronized (events) {
                                for (HedgeEvent e : events) {
                                    System.out.println("    " + e);
                                }
                            }
                        }
                    }
                    slowCalls += slowHere;
                    System.out.printf(
                            Locale.ROOT,
                            "session %d: %d inserts of %d >= 100 ms; %s; delay at the end %.2f ms (%s)%n",
                            s,
                            slowHere,
                            inserts,
                            executor.stats(),
                            executor.currentDelayNanos() / 1e6,
                            executor.currentDelaySource());
                }
            }
        }
        System.out.printf(Locale.ROOT, "%d sessions, %d inserts >= 100 ms in all%n", sessions, slowCalls);
    }

    private static void add(List<HedgeEvent> events, HedgeEvent e) {
        synchronized (events) {
            events.add(e);
        }
    }
}

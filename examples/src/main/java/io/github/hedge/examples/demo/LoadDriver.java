package io.github.hedge.examples.demo;

import io.github.hedge.grpc.HedgeHeaders;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Drives one channel (or, through a {@link Sender}, one Cassandra session) open-loop: calls start at
 * a fixed rate whatever the latency, as independent users would, so a slow answer cannot slow the
 * load down and hide itself. On a gRPC channel every attempt is counted by a {@link
 * ClientStreamTracer} on the call, which sees grpc-java's own hedges and hedge-grpc's alike; the
 * attempt that closed first with OK is the call's winner. Not thread-safe: one driver per phase.
 */
final class LoadDriver {
    /** Calls outstanding above this are not started (counted as errors), so a dead backend cannot exhaust memory. */
    private static final int MAX_IN_FLIGHT = 5_000;

    private final Sender sender;
    private final long deadlineMillis;
    private final AtomicInteger inFlight = new AtomicInteger();

    LoadDriver(Channel channel, MethodDescriptor<byte[], byte[]> method, byte[] request, long deadlineMillis) {
        this(grpc(channel, method, request, deadlineMillis), deadlineMillis);
    }

    /**
     * @param sender starts each call and ends it with {@link Call#finish} (the Cassandra mode's driver calls)
     * @param deadlineMillis how long a call may take; stragglers are awaited this long (plus 2 s)
     */
    LoadDriver(Sender sender, long deadlineMillis) {
        this.sender = sender;
        this.deadlineMillis = deadlineMillis;
    }

    /** Starts one call; must end it exactly once with {@link Call#finish}, from any thread. */
    interface Sender {
        void send(Call call);
    }

    /** One call's record; written by the transport's threads, read after the phase has drained. */
    static final class Call {
        final long start;
        /** the attempt (1 = the primary) whose answer the call got, 0 while unknown */
        final AtomicInteger winner = new AtomicInteger();
        /** attempts sent for the call, 0 while unknown (counted as 1) */
        final AtomicInteger attempts = new AtomicInteger();

        private final AtomicInteger inFlight;
        volatile long end;
        volatile boolean ok;
        volatile boolean done;
        /** where the answer came from, when the transport says ("127.0.0.1:9042"), else null */
        volatile String answeredBy;

        Call(long start, AtomicInteger inFlight) {
            this.start = start;
            this.inFlight = inFlight;
        }

        void finish(boolean success) {
            end = System.nanoTime();
            ok = success;
            done = true;
            inFlight.decrementAndGet();
        }
    }

    /** A phase's result with the calls it measured, and when its measured window began (System.nanoTime). */
    record Measured(PhaseResult result, List<Call> calls, long measureStartNanos) {}

    /**
     * Runs a warm-up (not recorded) then the measured window.
     *
     * @param label the phase's name
     * @param rate calls per second
     * @param warmupMillis warm-up length
     * @param measureMillis measured window length
     * @param progress told how far the phase is, may be called often
     * @return the measured calls
     */
    PhaseResult run(String label, double rate, long warmupMillis, long measureMillis, Progress progress) {
        return measure(label, rate, warmupMillis, measureMillis, progress).result();
    }

    /**
     * Drives the load for a while, nothing recorded, and waits for the calls it started (each is
     * bounded by its deadline): the JVM warm-up before any mode is measured.
     *
     * @param rate calls per second
     * @param millis how long
     */
    void warm(double rate, long millis) {
        drive(rate, millis, null, (elapsed, inFlight) -> {}, 0);
        awaitInFlight();
    }

    /** Lets the calls in flight finish: each is bounded by its deadline, so this waits at most that plus 2 s. */
    private void awaitInFlight() {
        long drainUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(deadlineMillis + 2_000);
        while (inFlight.get() > 0 && System.nanoTime() < drainUntil) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /**
     * {@link #run}, with the measured calls kept. The phase starts with a full garbage collection, so
     * no phase inherits the garbage of the phases before it: where a young collection's pause falls
     * then depends on what the phase itself allocates, not on the order of the modes.
     */
    Measured measure(String label, double rate, long warmupMillis, long measureMillis, Progress progress) {
        System.gc();
        drive(rate, warmupMillis, null, progress, 0);
        List<Call> calls = new ArrayList<>((int) (rate * measureMillis / 1000.0 * 1.1) + 16);
        long[] gcBefore = gcCountAndMillis();
        long measureStart = drive(rate, measureMillis, calls, progress, warmupMillis);
        awaitInFlight();
        long[] gcAfter = gcCountAndMillis();
        // a loser's stream may close just after its call did
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        int n = calls.size();
        long[] starts = new long[n];
        long[] latencies = new long[n];
        boolean[] ok = new boolean[n];
        long attempts = 0;
        long hedgesWon = 0;
        for (int i = 0; i < n; i++) {
            Call c = calls.get(i);
            starts[i] = c.start - measureStart;
            latencies[i] = c.done ? c.end - c.start : TimeUnit.MILLISECONDS.toNanos(deadlineMillis);
            ok[i] = c.done && c.ok;
            attempts += Math.max(1, c.attempts.get());
            if (ok[i] && c.winner.get() > 1) {
                hedgesWon++;
            }
        }
        return new Measured(
                new PhaseResult(
                        label,
                        starts,
                        latencies,
                        ok,
                        attempts,
                        hedgesWon,
                        measureMillis / 1000.0,
                        gcAfter[0] - gcBefore[0],
                        gcAfter[1] - gcBefore[1]),
                calls,
                measureStart);
    }

    /** @return collections and their accumulated time in milliseconds, summed over the JVM's collector beans */
    static long[] gcCountAndMillis() {
        long count = 0;
        long millis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            millis += Math.max(0, gc.getCollectionTime());
        }
        return new long[] {count, millis};
    }

    private long drive(double rate, long millis, List<Call> record, Progress progress, long offsetMillis) {
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        long issued = 0;
        long lastProgress = 0;
        for (long now = start; now < end; now = System.nanoTime()) {
            long due = (long) ((now - start) / 1e9 * rate);
            while (issued < due) {
                Call c = issue(now);
                if (record != null) {
                    record.add(c);
                }
                issued++;
            }
            if (now - lastProgress > 100_000_000L) {
                progress.update(offsetMillis + (now - start) / 1_000_000, inFlight.get());
                lastProgress = now;
            }
            LockSupport.parkNanos(200_000);
        }
        return start;
    }

    private Call issue(long now) {
        Call c = new Call(now, inFlight);
        if (inFlight.get() >= MAX_IN_FLIGHT) {
            c.end = now;
            c.done = true;
            return c;
        }
        inFlight.incrementAndGet();
        sender.send(c);
        return c;
    }

    /** The gRPC transport: one unary call per {@link Call}, every attempt counted by a stream tracer. */
    private static Sender grpc(
            Channel channel, MethodDescriptor<byte[], byte[]> method, byte[] request, long deadlineMillis) {
        return c -> {
            CallOptions options = CallOptions.DEFAULT
                    .withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS)
                    .withStreamTracerFactory(new ClientStreamTracer.Factory() {
                        @Override
                        public ClientStreamTracer newClientStreamTracer(
                                ClientStreamTracer.StreamInfo info, Metadata headers) {
                            // grpc-java's hedges say how many attempts came before; hedge-grpc's carry a header
                            int attempt = Math.max(info.getPreviousAttempts() + 1, HedgeHeaders.attemptNumber(headers));
                            c.attempts.incrementAndGet();
                            return new ClientStreamTracer() {
                                @Override
                                public void streamClosed(Status status) {
                                    if (status.isOk()) {
                                        c.winner.compareAndSet(0, attempt);
                                    }
                                }
                            };
                        }
                    });
            ClientCalls.asyncUnaryCall(channel.newCall(method, options), request, new StreamObserver<byte[]>() {
                @Override
                public void onNext(byte[] value) {}

                @Override
                public void onError(Throwable t) {
                    c.finish(false);
                }

                @Override
                public void onCompleted() {
                    c.finish(true);
                }
            });
        };
    }

    /** Told how far a phase is; called from the driving thread. */
    interface Progress {
        void update(long elapsedMillis, int inFlight);
    }
}

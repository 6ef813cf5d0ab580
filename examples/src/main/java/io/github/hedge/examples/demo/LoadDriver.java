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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Drives one channel open-loop: calls start at a fixed rate whatever the latency, as independent
 * users would, so a slow answer cannot slow the load down and hide itself. Every attempt the channel
 * sends is counted by a {@link ClientStreamTracer} on the call, which sees grpc-java's own hedges and
 * hedge-grpc's alike; the attempt that closed first with OK is the call's winner. Not thread-safe:
 * one driver per phase.
 */
final class LoadDriver {
    /** Calls outstanding above this are not started (counted as errors), so a dead backend cannot exhaust memory. */
    private static final int MAX_IN_FLIGHT = 5_000;

    private final Channel channel;
    private final MethodDescriptor<byte[], byte[]> method;
    private final byte[] request;
    private final long deadlineMillis;
    private final AtomicInteger inFlight = new AtomicInteger();

    LoadDriver(Channel channel, MethodDescriptor<byte[], byte[]> method, byte[] request, long deadlineMillis) {
        this.channel = channel;
        this.method = method;
        this.request = request;
        this.deadlineMillis = deadlineMillis;
    }

    /** One call's record; written by grpc threads, read after the phase has drained. */
    private static final class Call {
        final long start;
        final AtomicInteger winner = new AtomicInteger();
        final AtomicInteger attempts = new AtomicInteger();
        volatile long end;
        volatile boolean ok;
        volatile boolean done;

        Call(long start) {
            this.start = start;
        }
    }

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
        drive(rate, warmupMillis, null, progress, 0);
        List<Call> calls = new ArrayList<>((int) (rate * measureMillis / 1000.0 * 1.1) + 16);
        long measureStart = drive(rate, measureMillis, calls, progress, warmupMillis);
        // let the stragglers finish (each is bounded by its deadline)
        long drainUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(deadlineMillis + 2_000);
        while (inFlight.get() > 0 && System.nanoTime() < drainUntil) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
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
        return new PhaseResult(label, starts, latencies, ok, attempts, hedgesWon, measureMillis / 1000.0);
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
        Call c = new Call(now);
        if (inFlight.get() >= MAX_IN_FLIGHT) {
            c.end = now;
            c.done = true;
            return c;
        }
        inFlight.incrementAndGet();
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
                finish(false);
            }

            @Override
            public void onCompleted() {
                finish(true);
            }

            private void finish(boolean success) {
                c.end = System.nanoTime();
                c.ok = success;
                c.done = true;
                inFlight.decrementAndGet();
            }
        });
        return c;
    }

    /** Told how far a phase is; called from the driving thread. */
    interface Progress {
        void update(long elapsedMillis, int inFlight);
    }
}

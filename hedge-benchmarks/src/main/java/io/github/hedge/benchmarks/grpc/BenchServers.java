package io.github.hedge.benchmarks.grpc;

import io.github.hedge.benchmarks.grpc.proto.BenchGrpc;
import io.github.hedge.benchmarks.grpc.proto.BenchReply;
import io.github.hedge.benchmarks.grpc.proto.BenchRequest;
import io.github.hedge.grpc.HedgeHeaders;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The backends of {@link GrpcHedgeBench}: three grpc-netty servers whose latency is a pure function
 * of (call id, backend, attempt), drawn from a Pareto distribution, and what they count of the
 * attempts they receive. Shared by every mode, so each sees the same draws.
 */
final class BenchServers {
    private BenchServers() {}

    static final int BACKENDS = 3;
    static final double XM_MS = 2.0;
    static final double ALPHA = 1.5;
    static final double CAP_MS = 2000;

    /** Server-side state shared by the three backends for the current run. */
    static final class World {
        volatile double globalFactor = 1.0;
        final double[] backendFactor = new double[BACKENDS];
        volatile boolean earlyHeaders;
        /** What the servers received for the first {@link #headCalls} calls of a segment, and for the rest. */
        final Received[] parts = {new Received(), new Received()};
        /** Calls of a segment (by start order) counted in {@code parts[0]}; 0 = every call in {@code parts[1]}. */
        volatile long headCalls;

        final ConcurrentHashMap<Long, Integer> backendsOfCall = new ConcurrentHashMap<>();
        volatile AtomicLongArray execsPerSecond = new AtomicLongArray(1);
        volatile long runStartNanos;
        volatile boolean counting;

        World() {
            java.util.Arrays.fill(backendFactor, 1.0);
        }

        void resetScenario() {
            globalFactor = 1.0;
            java.util.Arrays.fill(backendFactor, 1.0);
            earlyHeaders = false;
        }

        void resetCounters(int seconds, long headCalls) {
            counting = false;
            for (Received r : parts) {
                r.executions.set(0);
                r.hedges.set(0);
                r.hedgesOnUsedBackend.set(0);
            }
            this.headCalls = headCalls;
            backendsOfCall.clear();
            execsPerSecond = new AtomicLongArray(seconds + 2);
        }

        /** @return 0 for a call among the segment's first {@link #headCalls}, else 1 */
        int partOf(long id) {
            return CallIds.indexOf(id) <= headCalls ? 0 : 1;
        }
    }

    /** Attempts the servers received, and how many were a call's later attempts (hedges). */
    static final class Received {
        final AtomicLong executions = new AtomicLong();
        final AtomicLong hedges = new AtomicLong();
        final AtomicLong hedgesOnUsedBackend = new AtomicLong();
    }

    static final Context.Key<Integer> ATTEMPT = Context.key("attempt");
    static final Metadata.Key<String> NATIVE_PREVIOUS =
            Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER);

    static double drawMillis(long id, int backend, int attempt) {
        long h = mix(id * 0x9E3779B97F4A7C15L + (backend + 1) * 0xC2B2AE3D27D4EB4FL + attempt * 0x165667B19E3779F9L);
        double u = ((h >>> 11) + 0.5) * 0x1.0p-53;
        return Math.min(CAP_MS, XM_MS / Math.pow(u, 1.0 / ALPHA));
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static final class Backend extends BenchGrpc.BenchImplBase {
        final int index;
        final World world;
        final ScheduledExecutorService timer;

        Backend(int index, World world, ScheduledExecutorService timer) {
            this.index = index;
            this.world = world;
            this.timer = timer;
        }

        @Override
        public void get(BenchRequest request, StreamObserver<BenchReply> out) {
            int attempt = ATTEMPT.get();
            long id = request.getId();
            Received received = world.parts[world.partOf(id)];
            if (world.counting) {
                received.executions.incrementAndGet();
                int sec = (int) ((System.nanoTime() - world.runStartNanos) / 1_000_000_000L);
                AtomicLongArray per = world.execsPerSecond;
                if (sec >= 0 && sec < per.length()) {
                    per.incrementAndGet(sec);
                }
            }
            int bit = 1 << index;
            boolean[] repeat = new boolean[2]; // [a later attempt of the call, on a backend it already used]
            world.backendsOfCall.compute(id, (k, mask) -> {
                if (mask == null) {
                    return bit;
                }
                repeat[0] = true;
                repeat[1] = (mask & bit) != 0;
                return mask | bit;
            });
            if (repeat[0] && world.counting) {
                received.hedges.incrementAndGet();
                if (repeat[1]) {
                    received.hedgesOnUsedBackend.incrementAndGet();
                }
            }
            double ms = drawMillis(id, index, attempt) * world.globalFactor * world.backendFactor[index];
            ServerCallStreamObserver<BenchReply> so = (ServerCallStreamObserver<BenchReply>) out;
            AtomicBoolean cancelled = new AtomicBoolean();
            so.setOnCancelHandler(() -> cancelled.set(true));
            timer.schedule(
                    () -> {
                        if (cancelled.get()) {
                            return;
                        }
                        so.onNext(BenchReply.newBuilder().setBackend(index).build());
                        so.onCompleted();
                    },
                    (long) (ms * 1000),
                    TimeUnit.MICROSECONDS);
        }
    }

    /** Reads the attempt number (hedge-grpc's marker or native's previous-attempts header); counts repeats. */
    static ServerInterceptor attemptReader(int index, World world) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                int attempt = HedgeHeaders.attemptNumber(headers);
                String prev = headers.get(NATIVE_PREVIOUS);
                if (prev != null) {
                    attempt = Math.max(attempt, Integer.parseInt(prev.trim()) + 1);
                }
                ServerCall<Q, R> c = call;
                if (world.earlyHeaders) {
                    call.sendHeaders(new Metadata());
                    c = new ForwardingServerCall.SimpleForwardingServerCall<Q, R>(call) {
                        @Override
                        public void sendHeaders(Metadata h) {}
                    };
                }
                return Contexts.interceptCall(Context.current().withValue(ATTEMPT, attempt), c, headers, next);
            }
        };
    }

    /** Call ids never repeat across segments, so no segment inherits another's per-call state. */
    static final class CallIds {
        static final long STEP = 1L << 40;
        static final AtomicLong BASE = new AtomicLong();

        /** @return a new segment's base; its calls are base + 1, base + 2, ... */
        static long next() {
            return BASE.addAndGet(STEP);
        }

        /** @return the call's number within its segment, from 1 */
        static long indexOf(long id) {
            return id & (STEP - 1);
        }
    }
}

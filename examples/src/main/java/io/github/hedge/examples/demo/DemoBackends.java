package io.github.hedge.examples.demo;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Three real grpc-netty servers on 127.0.0.1 (ephemeral ports) serving {@link DemoService#METHOD}.
 * Each answers after a heavy-tailed delay: lognormal around {@code medianMillis}, plus a Pareto tail
 * on 1% of requests; replica 3 is the flaky one, stalling {@code stallPercent}% of its requests for
 * 40 to 250 ms (think GC pauses or a noisy neighbour). Delays come from seeded generators, so two
 * runs draw the same sequence per replica. A cancelled request is never answered. Thread-safe.
 */
public final class DemoBackends implements AutoCloseable {
    private final List<Server> servers = new ArrayList<>();
    private final List<InetSocketAddress> addresses = new ArrayList<>();
    private final AtomicLong[] received;
    private final AtomicLong cancelled = new AtomicLong();
    private final ScheduledExecutorService timer;

    private DemoBackends(int replicas) {
        received = new AtomicLong[replicas];
        for (int i = 0; i < replicas; i++) {
            received[i] = new AtomicLong();
        }
        timer = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "demo-backend-timer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts three replicas.
     *
     * @param medianMillis the healthy replicas' median service time, in milliseconds (&gt; 0)
     * @param stallPercent the share of the flaky replica's requests that stall, in [0, 100]
     * @param seed seeds every replica's delay generator
     * @return the started backends; close them to stop the servers
     * @throws IOException if a server cannot bind to 127.0.0.1
     */
    public static DemoBackends start(double medianMillis, double stallPercent, long seed) throws IOException {
        if (!(medianMillis > 0) || Double.isInfinite(medianMillis)) {
            throw new IllegalArgumentException("medianMillis must be a finite number > 0, was " + medianMillis);
        }
        if (!(stallPercent >= 0 && stallPercent <= 100)) {
            throw new IllegalArgumentException("stallPercent must be in [0, 100], was " + stallPercent);
        }
        DemoBackends b = new DemoBackends(3);
        try {
            for (int i = 0; i < 3; i++) {
                b.startReplica(i, medianMillis, i == 2 ? stallPercent / 100.0 : 0.0, seed * 31 + i);
            }
        } catch (IOException | RuntimeException e) {
            b.close();
            throw e;
        }
        return b;
    }

    private void startReplica(int index, double medianMillis, double stallShare, long seed) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        ServerServiceDefinition service = ServerServiceDefinition.builder("hedge.demo.Demo")
                .addMethod(
                        DemoService.method(DemoService.METHOD, true),
                        ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> out) -> {
                            received[index].incrementAndGet();
                            long delayMicros;
                            synchronized (random) {
                                delayMicros = delayMicros(random, medianMillis, stallShare);
                            }
                            ServerCallStreamObserver<byte[]> call = (ServerCallStreamObserver<byte[]>) out;
                            call.setOnCancelHandler(cancelled::incrementAndGet);
                            timer.schedule(
                                    () -> {
                                        if (!call.isCancelled()) {
                                            call.onNext(new byte[] {(byte) index});
                                            call.onCompleted();
                                        }
                                    },
                                    delayMicros,
                                    TimeUnit.MICROSECONDS);
                        }))
                .build();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(service)
                .build()
                .start();
        servers.add(server);
        addresses.add(new InetSocketAddress("127.0.0.1", server.getPort()));
    }

    static long delayMicros(SplittableRandom random, double medianMillis, double stallShare) {
        double ms = medianMillis * Math.exp(0.5 * gaussian(random));
        if (random.nextDouble() < 0.01) {
            // Pareto(alpha = 1.5) tail, scale 4x the median, capped at one second
            ms += Math.min(1000.0, 4 * medianMillis / Math.pow(1 - random.nextDouble(), 1 / 1.5));
        }
        if (stallShare > 0 && random.nextDouble() < stallShare) {
            ms += 40 + 210 * random.nextDouble();
        }
        return Math.round(ms * 1000);
    }

    private static double gaussian(SplittableRandom random) {
        // Box-Muller; SplittableRandom has no nextGaussian on JDK 17
        double u = 1.0 - random.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
    }

    /** @return the replicas' addresses, 127.0.0.1 with ephemeral ports */
    public List<InetSocketAddress> addresses() {
        return List.copyOf(addresses);
    }

    /** @return requests each replica has received so far, hedges included */
    public long[] received() {
        long[] r = new long[received.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = received[i].get();
        }
        return r;
    }

    /** @return requests cancelled by their client before the replica answered (losing attempts) */
    public long cancelled() {
        return cancelled.get();
    }

    @Override
    public void close() {
        for (Server s : servers) {
            s.shutdownNow();
        }
        for (Server s : servers) {
            try {
                s.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        timer.shutdownNow();
    }
}

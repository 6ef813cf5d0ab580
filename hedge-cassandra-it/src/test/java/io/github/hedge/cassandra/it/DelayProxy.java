package io.github.hedge.cassandra.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy in front of one node's CQL port, for two things. A slow link without netem: it
 * forwards each chunk of bytes the server sends after a fixed delay plus an optional uniform
 * jitter (order is kept: a chunk never overtakes the one before), so every round trip through it
 * takes {@code delay} (+ up to {@code jitter}) longer; client to server bytes pass at once; the
 * delay applies to bytes read after it is set, and with no delay set answers pass without a
 * thread hop. And counting what the node executes: it shows the
 * bytes of both directions to {@link Executions} (requests before they are forwarded, answers as
 * the node sent them). Platform threads, three per connection (one forwards requests, two delay
 * answers; the driver opens one or two connections per node). Thread-safe.
 */
final class DelayProxy implements AutoCloseable {
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final int node;
    private final Executions executions;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile long delayNanos;
    private volatile long jitterNanos;
    private volatile boolean closed;

    /** A proxy for {@code node} (1-based) that reports the frames it sees to {@code executions}. */
    DelayProxy(String listenIp, int listenPort, String targetIp, int targetPort, int node, Executions executions) {
        this.node = node;
        this.executions = executions;
        try {
            server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getByName(listenIp), listenPort));
            target = new InetSocketAddress(InetAddress.getByName(targetIp), targetPort);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + listenIp + ":" + listenPort, e);
        }
        Thread accept = new Thread(this::acceptLoop, "delay-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** Server-to-client bytes wait {@code delayMs} plus a uniform {@code [0, jitterMs)}. */
    void setDelay(long delayMs, long jitterMs) {
        this.delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMs);
        this.jitterNanos = TimeUnit.MILLISECONDS.toNanos(jitterMs);
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                try {
                    upstream.connect(target, 5_000);
                } catch (IOException e) {
                    // the node is down: refuse the client at once, as the node itself would
                    client.close();
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                Executions.Connection frames = executions.connection(node);
                pump(client, upstream, false, frames::fromClient);
                pump(upstream, client, true, frames::fromNode);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                // the node is down: the client's connection was closed above or will be refused
            }
        }
    }

    private record Chunk(byte[] bytes, long dueNanos) implements Delayed {
        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(dueNanos, ((Chunk) o).dueNanos);
        }
    }

    private interface Tap {
        void bytes(byte[] buf, int n);
    }

    private void pump(Socket from, Socket to, boolean delayed, Tap tap) {
        if (!delayed) {
            // never delayed: one thread reads, shows the bytes to the tap, and forwards them
            Thread direct = new Thread(
                    () -> {
                        byte[] buf = new byte[64 * 1024];
                        try (InputStream in = from.getInputStream();
                                OutputStream out = to.getOutputStream()) {
                            int n;
                            while ((n = in.read(buf)) >= 0) {
                                tap.bytes(buf, n);
                                out.write(buf, 0, n);
                                out.flush();
                            }
                        } catch (IOException e) {
                            // connection closed
                        } finally {
                            closeQuietly(from);
                            closeQuietly(to);
                        }
                    },
                    "delay-proxy-forward");
            direct.setDaemon(true);
            direct.start();
            return;
        }
        DelayQueue<Chunk> queue = new DelayQueue<>();
        Chunk eof = new Chunk(new byte[0], 0);
        OutputStream out;
        try {
            out = to.getOutputStream();
        } catch (IOException e) {
            closeQuietly(from);
            closeQuietly(to);
            return;
        }
        // guards writes to `out` and `queued` (chunks in the queue, not yet written): with no delay set
        // and nothing queued, the reader writes a chunk itself, saving the writer thread's hop
        Object lock = new Object();
        int[] queued = {0};
        Thread reader = new Thread(
                () -> {
                    long lastDue = 0;
                    byte[] buf = new byte[64 * 1024];
                    try (InputStream in = from.getInputStream()) {
                        int n;
                        while ((n = in.read(buf)) >= 0) {
                            tap.bytes(buf, n);
                            long delay = delayNanos;
                            long jitter = jitterNanos;
                            synchronized (lock) {
                                if (delay == 0 && jitter == 0 && queued[0] == 0) {
                                    out.write(buf, 0, n);
                                    out.flush();
                                    continue;
                                }
                                queued[0]++;
                            }
                            long due = System.nanoTime()
                                    + delay
                                    + (jitter > 0 ? ThreadLocalRandom.current().nextLong(jitter) : 0);
                            // strictly increasing: the queue does not order equal due times
                            due = Math.max(due, lastDue + 1);
                            lastDue = due;
                            queue.put(new Chunk(Arrays.copyOf(buf, n), due));
                        }
                    } catch (IOException e) {
                        // connection closed
                    }
                    queue.put(new Chunk(eof.bytes(), Math.max(lastDue + 1, System.nanoTime())));
                },
                "delay-proxy-read");
        Thread writer = new Thread(
                () -> {
                    try (out) {
                        while (true) {
                            Chunk c = queue.take();
                            if (c.bytes().length == 0) {
                                break;
                            }
                            synchronized (lock) {
                                out.write(c.bytes());
                                out.flush();
                                queued[0]--;
                            }
                        }
                    } catch (IOException | InterruptedException e) {
                        // connection closed
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                "delay-proxy-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
        sockets.remove(s);
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // ignore
        }
        sockets.forEach(this::closeQuietly);
    }
}

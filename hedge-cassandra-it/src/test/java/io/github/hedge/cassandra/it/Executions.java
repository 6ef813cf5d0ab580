package io.github.hedge.cassandra.it;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counts, at each node's CQL port, the executions of the workload's non-idempotent statements:
 * every client connection to a node passes through that node's {@link DelayProxy}, which hands
 * this class the bytes in both directions. It parses the native protocol v4 frames (the suite's
 * driver config forces v4 without compression: a 9-byte header, then the body), and for each
 * {@code EXECUTE} of a registered prepared statement records which node received it, keyed by its
 * first bound value (every counter increment and conditional insert has a key of its own). The
 * node's answer on the same stream is matched to it: an error that says the node did not run the
 * statement ({@code Unavailable}, {@code Is_bootstrapping}, {@code Unprepared}) is counted as a
 * refusal; anything else, or no answer at all, counts as an execution (so a statement can only be
 * over-counted, never missed). Bytes that are not v4 frames are counted in {@link #unparsed()}.
 * Thread-safe.
 */
final class Executions {
    /** the suite's one instance: every proxy reports here */
    static final Executions SEEN = new Executions();

    static final int NODES = 3;
    private static final int OPCODE_ERROR = 0x00;
    private static final int OPCODE_EXECUTE = 0x0A;
    /** error codes with which a node answers a request it did not run */
    private static final Set<Integer> REFUSED = Set.of(0x1000, 0x1002, 0x2500);

    private final Map<String, Workload.Kind> prepared = new ConcurrentHashMap<>();
    private final Map<String, Statement> byKey = new ConcurrentHashMap<>();
    private final AtomicLong unparsed = new AtomicLong();

    /** What the nodes did with one statement (one key). */
    static final class Statement {
        final Workload.Kind kind;
        final String key;
        /** EXECUTE frames received, per node (index node - 1) */
        final AtomicLongArray received = new AtomicLongArray(NODES);
        /** of those, answered with an error meaning "not run" */
        final AtomicLongArray refused = new AtomicLongArray(NODES);

        Statement(Workload.Kind kind, String key) {
            this.kind = kind;
            this.key = key;
        }

        /** @return executions at {@code node} (1-based): frames received less refusals */
        long executed(int node) {
            return received.get(node - 1) - refused.get(node - 1);
        }

        long refusedTotal() {
            long n = 0;
            for (int i = 0; i < NODES; i++) {
                n += refused.get(i);
            }
            return n;
        }
    }

    /** Makes EXECUTEs of {@code preparedId} counted as statements of {@code kind}. */
    void register(ByteBuffer preparedId, Workload.Kind kind) {
        prepared.put(HexFormat.of().formatHex(bytes(preparedId.duplicate())), kind);
    }

    /** @return the statements whose key starts with {@code prefix}, by key */
    Map<String, Statement> withPrefix(String prefix) {
        Map<String, Statement> out = new TreeMap<>();
        byKey.forEach((k, s) -> {
            if (k.startsWith(prefix)) {
                out.put(k, s);
            }
        });
        return out;
    }

    /** @return chunks of bytes that could not be read as protocol v4 frames (0 when counting is complete) */
    long unparsed() {
        return unparsed.get();
    }

    /** A new client connection to {@code node} (1-based); not thread-safe: one reader thread per direction. */
    Connection connection(int node) {
        return new Connection(node);
    }

    /** One proxied connection: a frame reader per direction and the streams awaiting an answer. */
    final class Connection {
        private final int node;
        private final FrameReader requests = new FrameReader(0x04);
        private final FrameReader responses = new FrameReader(0x84);
        private final Map<Integer, Statement> pending = new ConcurrentHashMap<>();

        private Connection(int node) {
            this.node = node;
        }

        /** Client-to-node bytes, before they are forwarded. */
        void fromClient(byte[] buf, int n) {
            requests.feed(buf, n, this::onRequest);
        }

        /** Node-to-client bytes, as the node sent them. */
        void fromNode(byte[] buf, int n) {
            responses.feed(buf, n, this::onResponse);
        }

        private void onRequest(int flags, int stream, int opcode, ByteBuffer body) {
            if (opcode != OPCODE_EXECUTE) {
                return;
            }
            if ((flags & 0x04) != 0) {
                skipBytesMap(body); // custom payload
            }
            byte[] id = new byte[body.getShort() & 0xFFFF];
            body.get(id);
            Workload.Kind kind = prepared.get(HexFormat.of().formatHex(id));
            if (kind == null) {
                return;
            }
            body.getShort(); // consistency
            int queryFlags = body.get() & 0xFF;
            if ((queryFlags & 0x01) == 0 || body.getShort() == 0) {
                return;
            }
            if ((queryFlags & 0x40) != 0) {
                skipString(body); // the value's name
            }
            int len = body.getInt();
            if (len < 0) {
                return;
            }
            byte[] value = new byte[len];
            body.get(value);
            String key = new String(value, StandardCharsets.UTF_8);
            Statement s = byKey.computeIfAbsent(key, k -> new Statement(kind, k));
            s.received.incrementAndGet(node - 1);
            pending.put(stream, s);
        }

        private void onResponse(int flags, int stream, int opcode, ByteBuffer body) {
            Statement s = pending.remove(stream);
            if (s == null || opcode != OPCODE_ERROR) {
                return;
            }
            if ((flags & 0x02) != 0) {
                body.position(body.position() + 16); // tracing id
            }
            if ((flags & 0x08) != 0) {
                int warnings = body.getShort() & 0xFFFF;
                for (int i = 0; i < warnings; i++) {
                    skipString(body);
                }
            }
            if ((flags & 0x04) != 0) {
                skipBytesMap(body);
            }
            if (REFUSED.contains(body.getInt())) {
                s.refused.incrementAndGet(node - 1);
            }
        }
    }

    private interface Sink {
        void frame(int flags, int stream, int opcode, ByteBuffer body);
    }

    /** Splits a byte stream into protocol v4 frames: 9-byte header, then {@code length} bytes of body. */
    private final class FrameReader {
        private final int version;
        private final ByteArrayOutputStream pendingBytes = new ByteArrayOutputStream();
        private boolean broken;

        FrameReader(int version) {
            this.version = version;
        }

        void feed(byte[] buf, int n, Sink sink) {
            if (broken) {
                unparsed.incrementAndGet();
                return;
            }
            pendingBytes.write(buf, 0, n);
            ByteBuffer b = ByteBuffer.wrap(pendingBytes.toByteArray());
            while (b.remaining() >= 9) {
                int start = b.position();
                int v = b.get(start) & 0xFF;
                if (v != version || (b.get(start + 1) & 0x01) != 0) {
                    // another protocol version, or a compressed body: cannot count this connection
                    broken = true;
                    unparsed.incrementAndGet();
                    return;
                }
                int length = b.getInt(start + 5);
                if (b.remaining() < 9 + length) {
                    break;
                }
                int flags = b.get(start + 1) & 0xFF;
                int stream = b.getShort(start + 2);
                int opcode = b.get(start + 4) & 0xFF;
                ByteBuffer body = ByteBuffer.wrap(b.array(), start + 9, length).slice();
                try {
                    sink.frame(flags, stream, opcode, body);
                } catch (RuntimeException e) {
                    unparsed.incrementAndGet();
                }
                b.position(start + 9 + length);
            }
            pendingBytes.reset();
            pendingBytes.write(b.array(), b.position(), b.remaining());
        }
    }

    private static void skipString(ByteBuffer b) {
        int len = b.getShort() & 0xFFFF;
        b.position(b.position() + len);
    }

    private static void skipBytesMap(ByteBuffer b) {
        int n = b.getShort() & 0xFFFF;
        for (int i = 0; i < n; i++) {
            skipString(b);
            int len = b.getInt();
            if (len > 0) {
                b.position(b.position() + len);
            }
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}

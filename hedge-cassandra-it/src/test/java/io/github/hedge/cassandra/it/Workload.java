package io.github.hedge.cassandra.it;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The statements of every run: client threads of the idempotent kind run 78% reads of pre-written
 * rows and 22% inserts of new rows (alternately at LOCAL_ONE and LOCAL_QUORUM); threads of the
 * other kind run 80% counter increments and 20% {@code INSERT ... IF NOT EXISTS} (non-idempotent,
 * never hedged), so that a non-idempotent statement waiting on a fault does not hold up the
 * idempotent traffic whose throughput is measured. Every non-idempotent statement has a key of
 * its own (each increment its own counter row), so that the proxies ({@link Executions}) count each
 * one's executions per node and a counter row reading 2 means an increment applied twice. A {@link
 * Ledger} per run keeps what was acknowledged and what failed so that it can be checked afterwards.
 *
 * <p>{@code -Dhedge.it.brokenIdempotence=true} builds the broken client the exactly-once checks
 * must catch: counter increments and conditional inserts are marked idempotent, so every hedging
 * mode may send them twice.
 */
final class Workload {
    static final int ROWS = 1000;
    /** marks the non-idempotent statements idempotent: a broken client, to see the checks fail */
    static final boolean BROKEN_IDEMPOTENCE = Boolean.getBoolean("hedge.it.brokenIdempotence");

    private final CqlSession session;
    private final PreparedStatement read;
    private final PreparedStatement insert;
    private final PreparedStatement count;
    private final PreparedStatement lwt;

    /** Creates the keyspace (RF 3) and tables once, and writes the rows reads ask for. */
    static void createSchema(CqlSession admin) {
        Duration ddl = Duration.ofSeconds(30);
        admin.execute(SimpleStatement.newInstance("CREATE KEYSPACE IF NOT EXISTS ks WITH replication = "
                        + "{'class': 'SimpleStrategy', 'replication_factor': 3}")
                .setTimeout(ddl));
        admin.execute(SimpleStatement.newInstance("CREATE TABLE IF NOT EXISTS ks.acked (k text PRIMARY KEY, v bigint)")
                .setTimeout(ddl));
        admin.execute(
                SimpleStatement.newInstance("CREATE TABLE IF NOT EXISTS ks.counters (k text PRIMARY KEY, c counter)")
                        .setTimeout(ddl));
        admin.execute(SimpleStatement.newInstance("CREATE TABLE IF NOT EXISTS ks.lwt (k text PRIMARY KEY, v bigint)")
                .setTimeout(ddl));
        admin.checkSchemaAgreement();
        createReadTable(admin, "kv");
    }

    /**
     * Creates table {@code ks.<table>} shaped like {@code ks.kv} and writes the rows reads ask for
     * (at ALL). A run that reads its own new table starts from a coordinator read-latency history of
     * its own: Cassandra's {@code speculative_retry = '99p'} (the default) times a coordinator's
     * retry of a slow replica by that history, which earlier faults on a shared table could inflate.
     */
    static void createReadTable(CqlSession admin, String table) {
        createReadTable(admin, table, null);
    }

    /**
     * As {@link #createReadTable(CqlSession, String)}, with the table's {@code speculative_retry}
     * (Cassandra's syntax: a fixed time such as {@code '3ms'}; null keeps the default, {@code '99p'},
     * with no schema change).
     */
    static void createReadTable(CqlSession admin, String table, String speculativeRetry) {
        Duration ddl = Duration.ofSeconds(30);
        admin.execute(
                SimpleStatement.newInstance("CREATE TABLE IF NOT EXISTS ks." + table + " (k int PRIMARY KEY, v text)")
                        .setTimeout(ddl));
        if (speculativeRetry != null) {
            admin.execute(SimpleStatement.newInstance(
                            "ALTER TABLE ks." + table + " WITH speculative_retry = '" + speculativeRetry + "'")
                    .setTimeout(ddl));
        }
        admin.checkSchemaAgreement();
        PreparedStatement p = admin.prepare("INSERT INTO ks." + table + " (k, v) VALUES (?, ?)");
        // 32 at a time: the rows are written before the run's clock starts, so only the suite's length counts
        for (int from = 0; from < ROWS; from += 32) {
            List<java.util.concurrent.CompletableFuture<?>> writes = new ArrayList<>();
            for (int k = from; k < Math.min(ROWS, from + 32); k++) {
                writes.add(admin.executeAsync(p.bind(k, "value-" + k).setConsistencyLevel(ConsistencyLevel.ALL))
                        .toCompletableFuture());
            }
            writes.forEach(java.util.concurrent.CompletableFuture::join);
        }
    }

    /** Reads {@code ks.kv}. */
    Workload(CqlSession session) {
        this(session, "kv");
    }

    /** Reads {@code ks.<readTable>}, written by {@link #createReadTable}. */
    Workload(CqlSession session, String readTable) {
        this.session = session;
        read = session.prepare("SELECT v FROM ks." + readTable + " WHERE k = ?");
        insert = session.prepare("INSERT INTO ks.acked (k, v) VALUES (?, ?)");
        count = session.prepare("UPDATE ks.counters SET c = c + 1 WHERE k = ?");
        lwt = session.prepare("INSERT INTO ks.lwt (k, v) VALUES (?, ?) IF NOT EXISTS");
        Executions.SEEN.register(count.getId(), Kind.COUNTER);
        Executions.SEEN.register(lwt.getId(), Kind.LWT);
    }

    /** What one run acknowledged, to be checked against the cluster after the run. */
    static final class Ledger {
        final String run;
        final Queue<String> ackedInserts = new ConcurrentLinkedQueue<>();
        /** keys of the counter increments acknowledged / failed (each increments its own row) */
        final Queue<String> countAcked = new ConcurrentLinkedQueue<>();

        final Queue<String> countFailed = new ConcurrentLinkedQueue<>();
        /** keys of the conditional inserts applied / answered "not applied" / failed */
        final Queue<String> lwtApplied = new ConcurrentLinkedQueue<>();

        final Queue<String> lwtNotApplied = new ConcurrentLinkedQueue<>();
        final Queue<String> lwtFailed = new ConcurrentLinkedQueue<>();
        /** speculative executions the driver reports (driver-policy modes) */
        final AtomicLong speculative = new AtomicLong();

        Ledger(String run) {
            this.run = run;
        }
    }

    /** The kinds of statements; only the first two may be hedged. */
    enum Kind {
        READ,
        INSERT,
        COUNTER,
        LWT;

        boolean idempotent() {
            return this == READ || this == INSERT;
        }
    }

    /**
     * The consistency level of every statement but an LWT (always {@code LOCAL_QUORUM}): alternately
     * {@code LOCAL_ONE} and {@code LOCAL_QUORUM} by sequence number.
     */
    static ConsistencyLevel consistency(long seq) {
        return (seq & 1) == 0 ? ConsistencyLevel.LOCAL_ONE : ConsistencyLevel.LOCAL_QUORUM;
    }

    /** The route of the calling thread's last answered read or insert ({@link #route(ExecutionInfo)}). */
    private final ThreadLocal<String> route = new ThreadLocal<>();

    /**
     * @return the route of the calling thread's last answered read or insert, then forgets it; empty
     *     for the other kinds and for failures
     */
    String takeRoute() {
        String r = route.get();
        route.remove();
        return r == null ? "" : r;
    }

    /**
     * Where an answer came from, as the driver reports it: {@code n<i>} the answering coordinator
     * (the last octet of its address) and {@code s<k>} the speculative executions the driver started
     * for it (0 in the wrapped session, whose hedges are requests of their own).
     */
    static String route(com.datastax.oss.driver.api.core.cql.ExecutionInfo info) {
        com.datastax.oss.driver.api.core.metadata.Node c = info.getCoordinator();
        String node = "?";
        if (c != null && c.getEndPoint().resolve() instanceof java.net.InetSocketAddress a) {
            byte[] b = a.getAddress().getAddress();
            node = String.valueOf(b[b.length - 1] & 0xff);
        }
        return "n" + node + "s" + info.getSpeculativeExecutionCount();
    }

    /** Runs one statement of the mix; returns its kind; a failure comes as a {@link LoadRun.KindException}. */
    Kind next(Ledger ledger, int thread, long seq, boolean idempotent) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int dice = r.nextInt(100);
        Kind kind = idempotent ? (dice < 78 ? Kind.READ : Kind.INSERT) : (dice < 80 ? Kind.COUNTER : Kind.LWT);
        ConsistencyLevel cl = consistency(seq);
        String key = ledger.run + ":" + thread + ":" + seq;
        try {
            switch (kind) {
                case READ -> {
                    ResultSet rs = session.execute(
                            read.bind(r.nextInt(ROWS)).setIdempotent(true).setConsistencyLevel(cl));
                    ledger.speculative.addAndGet(rs.getExecutionInfo().getSpeculativeExecutionCount());
                    route.set(route(rs.getExecutionInfo()));
                    if (rs.one() == null) {
                        throw new IllegalStateException("a pre-written row was not found");
                    }
                }
                case INSERT -> {
                    ResultSet rs = session.execute(
                            insert.bind(key, seq).setIdempotent(true).setConsistencyLevel(cl));
                    ledger.speculative.addAndGet(rs.getExecutionInfo().getSpeculativeExecutionCount());
                    route.set(route(rs.getExecutionInfo()));
                    ledger.ackedInserts.add(key);
                }
                case COUNTER -> {
                    session.execute(
                            count.bind(key).setIdempotent(BROKEN_IDEMPOTENCE).setConsistencyLevel(cl));
                    ledger.countAcked.add(key);
                }
                case LWT -> {
                    ResultSet rs = session.execute(lwt.bind(key, seq)
                            .setIdempotent(BROKEN_IDEMPOTENCE)
                            .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM)
                            .setSerialConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL));
                    if (rs.wasApplied()) {
                        ledger.lwtApplied.add(key);
                    } else {
                        ledger.lwtNotApplied.add(key);
                    }
                }
            }
        } catch (RuntimeException e) {
            if (kind == Kind.COUNTER) {
                ledger.countFailed.add(key);
            } else if (kind == Kind.LWT) {
                ledger.lwtFailed.add(key);
            }
            throw new LoadRun.KindException(kind, e);
        }
        return kind;
    }

    /** What the client was told about a non-idempotent statement. */
    enum Told {
        /** acknowledged (a conditional insert: applied) */
        ACKED,
        /** a conditional insert answered "not applied": it found its own row, so it ran before */
        NOT_APPLIED,
        /** failed: the client cannot know whether it ran */
        FAILED
    }

    /**
     * One non-idempotent statement after the run: what the client was told, how often each node
     * executed it (counted at the node's proxy, {@link Executions}), how many of its frames a node
     * refused unrun, and what the cluster holds for its key (a counter row's value; for a
     * conditional insert 1 if the row exists).
     */
    record Statement(String key, Kind kind, Told told, long[] executedPerNode, long refused, long row) {
        long executed() {
            long n = 0;
            for (long e : executedPerNode) {
                n += e;
            }
            return n;
        }

        /** @return the nodes that executed it at least once */
        long nodes() {
            return java.util.Arrays.stream(executedPerNode).filter(e -> e > 0).count();
        }
    }

    /** What the cluster holds for a ledger, read at ALL once every node is up. */
    record Check(int acked, List<String> missingInserts, List<Statement> statements, List<String> missingLwts) {}

    static Check check(CqlSession admin, Ledger ledger) {
        List<String> missing = new ArrayList<>();
        PreparedStatement get = admin.prepare("SELECT v FROM ks.acked WHERE k = ?");
        readAll(admin, get, ledger.ackedInserts).forEach((k, row) -> {
            if (row == null) {
                missing.add(k);
            }
        });
        PreparedStatement getCount = admin.prepare("SELECT c FROM ks.counters WHERE k = ?");
        PreparedStatement getLwt = admin.prepare("SELECT v FROM ks.lwt WHERE k = ?");
        java.util.Map<String, Told> told = new java.util.TreeMap<>();
        java.util.Map<String, Kind> kinds = new java.util.HashMap<>();
        ledger.countAcked.forEach(k -> told.put(k, Told.ACKED));
        ledger.countFailed.forEach(k -> told.put(k, Told.FAILED));
        ledger.countAcked.forEach(k -> kinds.put(k, Kind.COUNTER));
        ledger.countFailed.forEach(k -> kinds.put(k, Kind.COUNTER));
        ledger.lwtApplied.forEach(k -> told.put(k, Told.ACKED));
        ledger.lwtNotApplied.forEach(k -> told.put(k, Told.NOT_APPLIED));
        ledger.lwtFailed.forEach(k -> told.put(k, Told.FAILED));
        for (Queue<String> q : List.of(ledger.lwtApplied, ledger.lwtNotApplied, ledger.lwtFailed)) {
            q.forEach(k -> kinds.put(k, Kind.LWT));
        }
        java.util.Map<String, Row> counters = readAll(
                admin,
                getCount,
                told.keySet().stream().filter(k -> kinds.get(k) == Kind.COUNTER).toList());
        java.util.Map<String, Row> lwts = readAll(
                admin,
                getLwt,
                told.keySet().stream().filter(k -> kinds.get(k) == Kind.LWT).toList());
        java.util.Map<String, Executions.Statement> seen = Executions.SEEN.withPrefix(ledger.run + ":");
        List<Statement> statements = new ArrayList<>();
        java.util.Set<String> keys = new java.util.TreeSet<>(told.keySet());
        keys.addAll(seen.keySet()); // a key executed that the client never sent would show as told null
        for (String k : keys) {
            Executions.Statement e = seen.get(k);
            long[] executed = new long[Executions.NODES];
            for (int n = 1; n <= Executions.NODES; n++) {
                executed[n - 1] = e == null ? 0 : e.executed(n);
            }
            Kind kind = kinds.containsKey(k) ? kinds.get(k) : e.kind;
            long row;
            if (kind == Kind.COUNTER) {
                Row r = counters.get(k);
                row = r == null ? 0 : r.getLong(0);
            } else {
                row = lwts.get(k) == null ? 0 : 1;
            }
            statements.add(new Statement(k, kind, told.get(k), executed, e == null ? 0 : e.refusedTotal(), row));
        }
        List<String> missingLwts = new ArrayList<>();
        for (String k : ledger.lwtApplied) {
            if (lwts.get(k) == null) {
                missingLwts.add(k);
            }
        }
        return new Check(ledger.ackedInserts.size(), missing, statements, missingLwts);
    }

    /** Reads {@code keys} at ALL, 64 at a time; a key with no row maps to null. */
    private static java.util.Map<String, Row> readAll(
            CqlSession admin, PreparedStatement get, java.util.Collection<String> keys) {
        java.util.Map<String, Row> out = new java.util.HashMap<>();
        List<String> all = new ArrayList<>(keys);
        for (int from = 0; from < all.size(); from += 64) {
            List<String> batch = all.subList(from, Math.min(all.size(), from + 64));
            List<java.util.concurrent.CompletableFuture<? extends com.datastax.oss.driver.api.core.cql.AsyncResultSet>>
                    futures = new ArrayList<>();
            for (String k : batch) {
                BoundStatement s =
                        get.bind(k).setConsistencyLevel(ConsistencyLevel.ALL).setTimeout(Duration.ofSeconds(10));
                futures.add(admin.executeAsync(s).toCompletableFuture());
            }
            for (int i = 0; i < batch.size(); i++) {
                out.put(batch.get(i), futures.get(i).join().one());
            }
        }
        return out;
    }
}

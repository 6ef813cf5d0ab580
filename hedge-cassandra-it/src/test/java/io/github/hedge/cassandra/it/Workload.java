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
 * idempotent traffic whose throughput is measured. A {@link Ledger} per run keeps what was
 * acknowledged so that it can be checked afterwards.
 */
final class Workload {
    static final int ROWS = 1000;
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
        Duration ddl = Duration.ofSeconds(30);
        admin.execute(
                SimpleStatement.newInstance("CREATE TABLE IF NOT EXISTS ks." + table + " (k int PRIMARY KEY, v text)")
                        .setTimeout(ddl));
        admin.checkSchemaAgreement();
        PreparedStatement p = admin.prepare("INSERT INTO ks." + table + " (k, v) VALUES (?, ?)");
        for (int k = 0; k < ROWS; k++) {
            admin.execute(p.bind(k, "value-" + k).setConsistencyLevel(ConsistencyLevel.ALL));
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
    }

    /** What one run acknowledged, to be checked against the cluster after the run. */
    static final class Ledger {
        final String run;
        final Queue<String> ackedInserts = new ConcurrentLinkedQueue<>();
        final AtomicLong countAcked = new AtomicLong();
        final AtomicLong countFailed = new AtomicLong();
        final Queue<String> lwtApplied = new ConcurrentLinkedQueue<>();
        final AtomicLong lwtNotApplied = new AtomicLong();
        final AtomicLong lwtFailed = new AtomicLong();
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
                    if (rs.one() == null) {
                        throw new IllegalStateException("a pre-written row was not found");
                    }
                }
                case INSERT -> {
                    ResultSet rs = session.execute(
                            insert.bind(key, seq).setIdempotent(true).setConsistencyLevel(cl));
                    ledger.speculative.addAndGet(rs.getExecutionInfo().getSpeculativeExecutionCount());
                    ledger.ackedInserts.add(key);
                }
                case COUNTER -> {
                    session.execute(count.bind(ledger.run).setIdempotent(false).setConsistencyLevel(cl));
                    ledger.countAcked.incrementAndGet();
                }
                case LWT -> {
                    ResultSet rs = session.execute(lwt.bind(key, seq)
                            .setIdempotent(false)
                            .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM)
                            .setSerialConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL));
                    if (rs.wasApplied()) {
                        ledger.lwtApplied.add(key);
                    } else {
                        ledger.lwtNotApplied.incrementAndGet();
                    }
                }
            }
        } catch (RuntimeException e) {
            if (kind == Kind.COUNTER) {
                ledger.countFailed.incrementAndGet();
            } else if (kind == Kind.LWT) {
                ledger.lwtFailed.incrementAndGet();
            }
            throw new LoadRun.KindException(kind, e);
        }
        return kind;
    }

    /** What the cluster holds for a ledger, read at ALL once every node is up. */
    record Check(
            int acked,
            List<String> missingInserts,
            long counter,
            long countAcked,
            long countFailed,
            int lwtApplied,
            long lwtNotApplied,
            List<String> missingLwts) {}

    static Check check(CqlSession admin, Ledger ledger) {
        PreparedStatement get = admin.prepare("SELECT v FROM ks.acked WHERE k = ?");
        List<String> missing = new ArrayList<>();
        for (String k : ledger.ackedInserts) {
            BoundStatement s =
                    get.bind(k).setConsistencyLevel(ConsistencyLevel.ALL).setTimeout(Duration.ofSeconds(10));
            if (admin.execute(s).one() == null) {
                missing.add(k);
            }
        }
        Row row = admin.execute(SimpleStatement.newInstance("SELECT c FROM ks.counters WHERE k = ?", ledger.run)
                        .setConsistencyLevel(ConsistencyLevel.ALL))
                .one();
        long counter = row == null ? 0 : row.getLong(0);
        PreparedStatement getLwt = admin.prepare("SELECT v FROM ks.lwt WHERE k = ?");
        List<String> missingLwts = new ArrayList<>();
        for (String k : ledger.lwtApplied) {
            if (admin.execute(getLwt.bind(k).setConsistencyLevel(ConsistencyLevel.ALL))
                            .one()
                    == null) {
                missingLwts.add(k);
            }
        }
        return new Check(
                ledger.ackedInserts.size(),
                missing,
                counter,
                ledger.countAcked.get(),
                ledger.countFailed.get(),
                ledger.lwtApplied.size(),
                ledger.lwtNotApplied.get(),
                missingLwts);
    }
}

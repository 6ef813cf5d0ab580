package io.github.hedge.spring.boot.autoconfigure;

/** Opens {@link SimulatedCassandra} (package-private test fixture) to the web application's test. */
public final class SimulatedCassandraAccess implements AutoCloseable {
    private final SimulatedCassandra cassandra = new SimulatedCassandra();

    /** @return host:port of the first simulated node */
    public String contactPoint() {
        return cassandra.contactPoint();
    }

    @Override
    public void close() throws Exception {
        cassandra.close();
    }
}

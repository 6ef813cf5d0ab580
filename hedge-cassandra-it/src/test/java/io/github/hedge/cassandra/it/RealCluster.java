package io.github.hedge.cassandra.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real 3-node cluster of the whole suite, started once by {@code scripts/cassandra-cluster} on
 * first use and stopped by a shutdown hook (and, should this JVM die without running it, by the
 * script's watchdog, which is given this JVM's pid). Clients reach every node through a {@link
 * DelayProxy} of its own (the node advertises the proxy's address), so that {@link Executions#SEEN}
 * sees every request a node receives; node 3's ({@link #proxy()}) adds no delay until a test asks
 * for one. Faults are sent the way an operator would: {@code kill -9}, {@code kill -STOP}/{@code
 * -CONT}.
 *
 * <p>{@link #withCoordinatorOnlyNode()} is the other cluster a JVM may start instead (never both:
 * they share addresses and ports): the three data nodes without a proxy plus node {@link
 * #COORDINATOR_ONLY_NODE}, started with {@code -Dcassandra.join_ring=false} ({@code FatClientIT}).
 */
final class RealCluster {
    static final String IP_PREFIX = System.getProperty("hedge.it.ipPrefix", "127.0.0");
    static final String PROXY_PREFIX = System.getProperty("hedge.it.proxyPrefix", "127.0.1");
    static final int PROXIED_NODE = 3;
    /** the node {@link #withCoordinatorOnlyNode()} adds: no token, no data, coordinates requests */
    static final int COORDINATOR_ONLY_NODE = 4;

    private static final Path SCRIPT = Path.of(System.getProperty("hedge.it.script", "../scripts/cassandra-cluster"));
    private static final Path DIR = Path.of(System.getProperty("hedge.it.clusterDir", "target/cassandra-cluster"));
    private static RealCluster instance;
    private static RealCluster withCoordinatorOnlyNode;

    /** the proxies of nodes 1-3 (index node - 1); empty in the cluster with a coordinator-only node */
    private final List<DelayProxy> proxies = new ArrayList<>();

    private RealCluster(boolean coordinatorOnlyNode) {
        String owner = String.valueOf(ProcessHandle.current().pid());
        if (coordinatorOnlyNode) {
            script("start", "--nodes", "3", "--coordinators", "1", "--ip-prefix", IP_PREFIX, "--owner-pid", owner);
        } else {
            // the proxies first: each node advertises its proxy's address to clients
            for (int node = 1; node <= 3; node++) {
                proxies.add(new DelayProxy(
                        PROXY_PREFIX + "." + node, 9042, IP_PREFIX + "." + node, 9042, node, Executions.SEEN));
            }
            script(
                    "start",
                    "--nodes",
                    "3",
                    "--ip-prefix",
                    IP_PREFIX,
                    "--proxy-prefix",
                    PROXY_PREFIX,
                    "--proxied-node",
                    "1,2,3",
                    "--owner-pid",
                    owner);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::stop, "cassandra-cluster-stop"));
    }

    /** The suite's cluster, started on first call (~20-60 s). */
    static synchronized RealCluster get() {
        if (withCoordinatorOnlyNode != null) {
            throw new IllegalStateException("this JVM runs the cluster with a coordinator-only node (FatClientIT);"
                    + " run FatClientIT alone: -Dit.test=FatClientIT");
        }
        if (instance == null) {
            instance = new RealCluster(false);
        }
        return instance;
    }

    /**
     * Three data nodes (no proxy) and the coordinator-only node {@link #COORDINATOR_ONLY_NODE},
     * started on first call; refused in a JVM that runs the suite's cluster.
     */
    static synchronized RealCluster withCoordinatorOnlyNode() {
        if (instance != null) {
            throw new IllegalStateException("this JVM runs the suite's cluster on the same addresses;"
                    + " run FatClientIT alone: -Dit.test=FatClientIT");
        }
        if (withCoordinatorOnlyNode == null) {
            withCoordinatorOnlyNode = new RealCluster(true);
        }
        return withCoordinatorOnlyNode;
    }

    /** The proxy of node {@link #PROXIED_NODE}, the one the slow-link tests slow down. */
    DelayProxy proxy() {
        if (proxies.isEmpty()) {
            throw new IllegalStateException("the cluster with a coordinator-only node has no proxy");
        }
        return proxies.get(PROXIED_NODE - 1);
    }

    static String ip(int node) {
        return IP_PREFIX + "." + node;
    }

    /** The address clients of the suite's cluster use for the node: its proxy's. */
    static String clientIp(int node) {
        return PROXY_PREFIX + "." + node;
    }

    long pid(int node) {
        try {
            return Long.parseLong(
                    Files.readString(DIR.resolve("node" + node).resolve("pid")).trim());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** SIGKILL, as an operator's {@code kill -9}. */
    void kill9(int node) {
        signal(node, "-KILL");
    }

    /** SIGSTOP: the node stops answering but keeps its connections open, like a long GC pause. */
    void stall(int node) {
        signal(node, "-STOP");
    }

    /** SIGCONT: ends a {@link #stall}. */
    void resume(int node) {
        signal(node, "-CONT");
    }

    /** Restarts a killed node and returns once it serves CQL. */
    void restart(int node) {
        script("start-node", String.valueOf(node));
    }

    /** CPU time the node's JVM has used (user + system), in milliseconds, from /proc. */
    long cpuMillis(int node) {
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(pid(node)), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14, 15)
            return ticks * 10; // USER_HZ is 100 on Linux
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void signal(int node, String signal) {
        run(List.of("kill", signal, String.valueOf(pid(node))));
    }

    private void stop() {
        proxies.forEach(DelayProxy::close);
        script("stop");
    }

    private static void script(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(SCRIPT.toAbsolutePath().toString());
        cmd.addAll(List.of(args));
        cmd.add("--dir");
        cmd.add(DIR.toAbsolutePath().toString());
        run(cmd);
    }

    private static void run(List<String> cmd) {
        try {
            Path log = Files.createDirectories(DIR.toAbsolutePath().getParent()).resolve("cassandra-cluster.log");
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IllegalStateException(cmd + " did not finish in 10 minutes; see " + log);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(cmd + " failed (" + p.exitValue() + "): " + Files.readString(log));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

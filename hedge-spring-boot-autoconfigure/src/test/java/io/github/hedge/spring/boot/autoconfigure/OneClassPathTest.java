package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.github.hedge.cassandra.HedgedCqlSession;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.netty.util.Version;
import java.io.File;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The combination a user has: Spring Boot 3.5, the Apache Cassandra driver 4.19.3 and grpc-netty on
 * one class path (this module's test class path) resolve one Netty, and an application with all of
 * them starts and uses both.
 */
class OneClassPathTest {
    private static final Pattern NETTY_JAR = Pattern.compile("(netty-[a-z0-9-]+?)-(\\d+\\.\\d+\\.\\d+\\.Final)\\.jar");

    @Test
    void should_resolve_one_netty_version_when_spring_boot_the_cassandra_driver_and_grpc_netty_share_a_class_path() {
        Map<String, String> jars = new TreeMap<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Matcher m = NETTY_JAR.matcher(new File(entry).getName());
            if (m.matches()) {
                jars.put(m.group(1), m.group(2));
            }
        }
        // the driver needs handler, grpc-netty needs codec-http2: both are here, from one release
        assertThat(jars).containsKeys("netty-handler", "netty-codec-http2", "netty-transport");
        assertThat(new TreeSet<>(jars.values()))
                .as("Netty versions on the class path: %s", jars)
                .hasSize(1);

        // and what Netty itself reports from each jar's META-INF/io.netty.versions.properties
        Set<String> reported = new TreeSet<>();
        for (Version v : Version.identify().values()) {
            reported.add(v.artifactVersion());
        }
        assertThat(reported).isEqualTo(new TreeSet<>(jars.values()));
        assertThat(classExists("com.datastax.oss.driver.api.core.CqlSession")).isTrue();
        assertThat(classExists("io.grpc.netty.NettyChannelBuilder")).isTrue();
    }

    @Test
    void should_start_an_application_that_uses_cassandra_and_grpc_when_both_are_on_the_class_path() throws Exception {
        try (SimulatedCassandra cassandra = new SimulatedCassandra();
                EchoServer grpc = new EchoServer();
                ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.cassandra.contact-points=" + cassandra.contactPoint(),
                                "spring.cassandra.local-datacenter=dc1",
                                "spring.cassandra.request.timeout=10s",
                                "hedge.grpc.methods[test.Echo/Read].idempotent=true")
                        .run()) {
            grpc.primaryDelayMs = 0;
            CqlSession session = ctx.getBean(CqlSession.class);
            assertThat(session).isInstanceOf(HedgedCqlSession.class);
            session.execute(
                    SimpleStatement.newInstance(SimulatedCassandra.SELECT).setIdempotent(true));
            assertThat(cassandra.received(SimulatedCassandra.SELECT)).isEqualTo(1);

            ManagedChannel channel = ctx.getBean(HedgeGrpcChannelConfigurer.class)
                    .configure(ManagedChannelBuilder.forAddress("127.0.0.1", grpc.port())
                            .usePlaintext())
                    .build();
            try {
                assertThat(EchoServer.call(channel, EchoServer.READ, "x")).isEqualTo("attempt 1");
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }

    private static boolean classExists(String name) {
        try {
            Class.forName(name, false, OneClassPathTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}
}

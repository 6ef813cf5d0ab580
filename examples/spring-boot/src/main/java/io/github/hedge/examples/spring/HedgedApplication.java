package io.github.hedge.examples.spring;

import io.github.hedge.core.HedgeBudget;
import io.github.hedge.spring.boot.autoconfigure.HedgeConfigCustomizer;
import io.github.hedge.spring.boot.autoconfigure.HedgeGrpcChannelConfigurer;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot web application with hedge-spring-boot-starter, hedge-cassandra and hedge-grpc on
 * the class path, configured by {@code application.properties} alone, apart from one customizer:
 *
 * <ul>
 *   <li>{@code GET /users/{id}}: {@link UserService#find}, {@code @Hedged("users")}, calls a slow
 *       simulated backend; a hedge answers when the first attempt is slow;
 *   <li>{@code POST /orders/{productId}}: {@link OrderService#place}, {@code @Hedged("orders")}, not
 *       marked idempotent: runs exactly once per request;
 *   <li>{@code GET /products/{id}}: {@link ProductRepository} reads Cassandra through the {@code
 *       CqlSession} Spring Boot builds and hedge wraps, and {@link PriceClient} calls a gRPC service
 *       through a channel hedge configures;
 *   <li>{@code GET /actuator/hedges}, {@code /actuator/metrics/hedge.*}: every hedged executor (the
 *       two instances, the Cassandra session's, one per gRPC method) with its counters.
 * </ul>
 *
 * Run it with a Cassandra node and the prices service to talk to, e.g. {@code
 * --spring.cassandra.contact-points=10.0.0.1:9042 --spring.cassandra.local-datacenter=dc1
 * --shop.prices.target=dns:///prices:50051}; {@code HedgedApplicationTest} starts it against a
 * simulated Cassandra cluster and a gRPC server on loopback.
 */
@SpringBootApplication
public class HedgedApplication {
    /**
     * What properties cannot say goes in a customizer. A 5% budget earns its first hedge only after
     * 20 primary calls; for a service that is called rarely, a floor of one hedge per second
     * (at most) lets hedging work from the first call.
     *
     * @return the customizer, applied to every instance
     */
    @Bean
    HedgeConfigCustomizer lowRateBudget() {
        return (name, builder) -> {
            if (name.equals("users")) {
                builder.budget(HedgeBudget.builder()
                        .ratio(0.05)
                        .window(Duration.ofSeconds(30))
                        .minPerSecond(1)
                        .build());
            }
        };
    }

    /**
     * The channel to the prices service. {@link HedgeGrpcChannelConfigurer} adds hedge's
     * interceptor (configured by {@code hedge.grpc.*}) and its balancer, which sends a hedge to a
     * backend the call has not tried.
     *
     * @param hedge the auto-configured configurer
     * @param target the prices service, e.g. {@code dns:///prices:50051} ({@code shop.prices.target})
     * @return the channel; shut down with the context
     */
    @Bean(destroyMethod = "shutdownNow")
    ManagedChannel pricesChannel(HedgeGrpcChannelConfigurer hedge, @Value("${shop.prices.target}") String target) {
        return hedge.configure(ManagedChannelBuilder.forTarget(target).usePlaintext())
                .build();
    }

    /**
     * Starts the web application.
     *
     * @param args Spring Boot's arguments (e.g. {@code --server.port=8081})
     */
    public static void main(String[] args) {
        SpringApplication.run(HedgedApplication.class, args);
    }
}

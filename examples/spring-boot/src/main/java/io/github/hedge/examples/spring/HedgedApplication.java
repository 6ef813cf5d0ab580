package io.github.hedge.examples.spring;

import io.github.hedge.core.HedgeBudget;
import io.github.hedge.spring.boot.autoconfigure.HedgeConfigCustomizer;
import java.time.Duration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot application with hedge-spring-boot-starter on the class path: the starter's
 * auto-configuration reads {@code hedge.*} from {@code application.properties} and hedges every bean
 * method annotated {@link io.github.hedge.spring.annotation.Hedged @Hedged}.
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
     * Starts the application, reads a user through the hedged service, and stops.
     *
     * @param args Spring Boot's arguments (e.g. {@code --hedge.instances.users.max-attempts=3})
     */
    public static void main(String[] args) {
        try (ConfigurableApplicationContext context = SpringApplication.run(HedgedApplication.class, args)) {
            UserService users = context.getBean(UserService.class);
            System.out.println(users.find("42").toCompletableFuture().join());
        }
    }
}

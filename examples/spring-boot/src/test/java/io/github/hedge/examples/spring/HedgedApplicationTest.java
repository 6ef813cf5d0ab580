package io.github.hedge.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HedgedApplicationTest {
    private static ConfigurableApplicationContext start() {
        SpringApplication app = new SpringApplication(HedgedApplication.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        return app.run();
    }

    @Test
    void should_answer_from_the_hedge_when_the_first_invocation_is_slow() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            UserService users = context.getBean(UserService.class);
            String answer = users.find("42").toCompletableFuture().get(30, TimeUnit.SECONDS);
            // invocation 1 is the slow one (2 s); the hedge after 50 ms is invocation 2
            assertThat(answer).isEqualTo("user-42 (invocation 2)");
            assertThat(users.invocations()).isEqualTo(2);
        }
    }

    @Test
    void should_configure_the_users_instance_from_application_properties_when_started() {
        try (ConfigurableApplicationContext context = start()) {
            context.getBean(UserService.class).find("1");
            HedgedExecutor executor = context.getBean(HedgeInstances.class).executor("users");
            assertThat(executor.config().maxAttempts()).isEqualTo(2);
            assertThat(executor.config().idempotentByDefault()).isTrue();
            assertThat(executor.config().deadline()).contains(java.time.Duration.ofSeconds(5));
        }
    }

    @Test
    void should_run_as_a_program_when_main_is_called() {
        HedgedApplication.main(new String[] {"--spring.main.web-application-type=none"});
    }
}

package io.github.hedge.spring.boot.starter;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.HedgeBudget;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.autoconfigure.HedgeConfigCustomizer;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * An application whose class path is this starter and nothing else (no AspectJ, no Actuator):
 * the auto-configuration is found through {@code AutoConfiguration.imports}, and a blocking
 * {@code @Hedged} method is hedged.
 */
class StarterApplicationTest {

    @Test
    void should_hedge_an_annotated_method_when_the_application_has_only_the_starter() throws Exception {
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "spring.main.banner-mode=off",
                        "hedge.instances.reads.idempotent=true",
                        "hedge.instances.reads.delay.fixed=1ms")
                .run()) {
            assertThat(ctx.getClassLoader().getResource("org/aspectj/weaver/Advice.class"))
                    .as("AspectJ is not on the starter's class path")
                    .isNull();
            Backend backend = ctx.getBean(Backend.class);
            assertThat(AopUtils.isAopProxy(backend)).isTrue();
            assertThat(backend.read()).isEqualTo("answer 2");
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("reads")
                            .stats()
                            .hedgesWon())
                    .isEqualTo(1);
        }
    }

    @SpringBootApplication
    static class App {
        @Bean
        Backend backend() {
            return new Backend();
        }

        @Bean
        HedgeConfigCustomizer unlimitedBudget() {
            return (name, builder) -> builder.budget(HedgeBudget.unlimited());
        }
    }

    /** The first invocation blocks until the hedge that answered interrupts it. */
    public static class Backend {
        private final AtomicInteger invocations = new AtomicInteger();

        @Hedged("reads")
        public String read() throws InterruptedException {
            int n = invocations.incrementAndGet();
            if (n == 1) {
                new CountDownLatch(1).await();
            }
            return "answer " + n;
        }
    }
}

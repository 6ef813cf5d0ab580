package io.github.hedge.spring.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.HedgeBudget;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.autoconfigure.HedgeAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeConfigCustomizer;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.annotation.Retry;
import io.github.resilience4j.springboot3.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.github.resilience4j.springboot3.retry.autoconfigure.RetryAutoConfiguration;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @Hedged} next to resilience4j's {@code @CircuitBreaker} and {@code @Retry} on one method,
 * with resilience4j-spring-boot3's own auto-configuration: the default order puts hedging inside
 * both, and {@code hedge.aspect.order} moves it.
 */
class Resilience4jOrderTest {
    private static final String OUTSIDE_RESILIENCE4J = "hedge.aspect.order=" + (Integer.MAX_VALUE - 10);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    AopAutoConfiguration.class,
                    HedgeAutoConfiguration.class,
                    CircuitBreakerAutoConfiguration.class,
                    RetryAutoConfiguration.class))
            .withUserConfiguration(Beans.class)
            .withPropertyValues(
                    "hedge.defaults.delay.fixed=1ms",
                    "hedge.instances.reads.idempotent=true",
                    "resilience4j.retry.instances.backend.max-attempts=3",
                    "resilience4j.retry.instances.backend.wait-duration=1ms");

    @Test
    void should_count_one_call_in_the_circuit_breaker_when_the_default_order_puts_hedging_inside() {
        runner.run(ctx -> {
            Service service = ctx.getBean(Service.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(ctx.getBean(HedgedAdvisor.class).getOrder()).isEqualTo(HedgedAdvisor.DEFAULT_ORDER);

            assertThat(service.read()).isEqualTo("answer 2");
            assertThat(probe.interrupted.await(10, TimeUnit.SECONDS)).isTrue();

            CircuitBreaker.Metrics metrics = ctx.getBean(CircuitBreakerRegistry.class)
                    .circuitBreaker("backend")
                    .getMetrics();
            assertThat(metrics.getNumberOfSuccessfulCalls()).isEqualTo(1);
            assertThat(metrics.getNumberOfFailedCalls())
                    .as("the loser hedging cancelled is not a failure of the backend")
                    .isZero();
        });
    }

    @Test
    void should_count_every_attempt_in_the_circuit_breaker_when_hedging_is_ordered_outside() {
        runner.withPropertyValues(OUTSIDE_RESILIENCE4J).run(ctx -> {
            Service service = ctx.getBean(Service.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(service.read()).isEqualTo("answer 2");
            assertThat(probe.interrupted.await(10, TimeUnit.SECONDS)).isTrue();

            CircuitBreaker.Metrics metrics = ctx.getBean(CircuitBreakerRegistry.class)
                    .circuitBreaker("backend")
                    .getMetrics();
            HedgedAdvisorTest.await(() -> metrics.getNumberOfFailedCalls() == 1);
            assertThat(metrics.getNumberOfSuccessfulCalls()).isEqualTo(1);
        });
    }

    @Test
    void should_retry_whole_hedged_calls_when_the_default_order_puts_hedging_inside_retry() {
        runner.run(ctx -> {
            Service service = ctx.getBean(Service.class);
            assertThatThrownBy(service::write).isInstanceOf(IOException.class);
            assertThat(ctx.getBean(Probe.class).invocations.get()).isEqualTo(3);
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("writes")
                            .stats()
                            .calls())
                    .as("each retry is a new hedged call")
                    .isEqualTo(3);
        });
    }

    @Test
    void should_retry_inside_one_hedged_call_when_hedging_is_ordered_outside_retry() {
        runner.withPropertyValues(OUTSIDE_RESILIENCE4J).run(ctx -> {
            Service service = ctx.getBean(Service.class);
            assertThatThrownBy(service::write).isInstanceOf(IOException.class);
            assertThat(ctx.getBean(Probe.class).invocations.get()).isEqualTo(3);
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("writes")
                            .stats()
                            .calls())
                    .isEqualTo(1);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        Probe probe() {
            return new Probe();
        }

        @Bean
        Service service(Probe probe) {
            return new Service(probe);
        }

        @Bean
        HedgeConfigCustomizer unlimitedBudget() {
            return (name, builder) -> builder.budget(HedgeBudget.unlimited());
        }
    }

    static class Probe {
        final AtomicInteger invocations = new AtomicInteger();
        final CountDownLatch interrupted = new CountDownLatch(1);
    }

    static class Service {
        private final Probe probe;

        Service(Probe probe) {
            this.probe = probe;
        }

        /** The first invocation blocks until it is interrupted; the others answer at once. */
        @io.github.resilience4j.circuitbreaker.annotation.CircuitBreaker(name = "backend")
        @Hedged("reads")
        public String read() throws InterruptedException {
            int n = probe.invocations.incrementAndGet();
            if (n == 1) {
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    probe.interrupted.countDown();
                    throw e;
                }
            }
            return "answer " + n;
        }

        /** Always fails; not idempotent, so hedging runs it once per hedged call. */
        @Retry(name = "backend")
        @Hedged("writes")
        public String write() throws IOException {
            probe.invocations.incrementAndGet();
            throw new IOException("backend down");
        }
    }
}

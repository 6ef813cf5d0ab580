package io.github.hedge.spring.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.autoconfigure.HedgeAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeConfigCustomizer;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import io.github.hedge.spring.boot.autoconfigure.UnhedgeableMethodFailureAnalyzer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Scope;
import org.springframework.context.annotation.ScopedProxyMode;

/**
 * A {@code @Hedged} method that Spring's proxy cannot intercept fails the start, naming the bean and
 * the method, instead of running unhedged without a word.
 */
class HedgedMethodsValidatorTest {
    private static final long WAIT_SECONDS = 10;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, HedgeAutoConfiguration.class))
            .withPropertyValues("hedge.defaults.delay.fixed=1ms", "hedge.defaults.idempotent=true")
            .withBean(Probe.class)
            .withBean(
                    "unlimitedBudget",
                    HedgeConfigCustomizer.class,
                    () -> (name, b) -> b.budget(HedgeBudget.unlimited()));

    @Test
    void should_fail_the_start_naming_bean_and_method_when_a_hedged_method_is_final_under_a_class_based_proxy() {
        runner.withUserConfiguration(FinalBeans.class).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure())
                    .isInstanceOf(BeanCreationException.class)
                    .rootCause()
                    .isInstanceOf(UnhedgeableMethodException.class)
                    .hasMessage("@Hedged method " + FinalMethod.class.getName() + ".read() of bean 'finalMethod'"
                            + " cannot be hedged: it is final, so the class-based (CGLIB) proxy cannot override it:"
                            + " a call would run on the proxy instance itself, unhedged; remove 'final', or put"
                            + " @Hedged on an interface the bean implements and set"
                            + " spring.aop.proxy-target-class=false");
            FailureAnalysis analysis = new UnhedgeableMethodFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(analysis.getDescription()).contains("'finalMethod'").contains(".read()");
        });
    }

    @Test
    void should_hedge_a_final_method_when_it_is_called_through_an_interface_based_proxy() {
        runner.withUserConfiguration(FinalBeans.class)
                .withPropertyValues("spring.aop.proxy-target-class=false")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Reader reader = ctx.getBean(Reader.class);
                    assertThat(reader.read().get(WAIT_SECONDS, TimeUnit.SECONDS))
                            .isEqualTo("answer 2");
                    assertThat(ctx.getBean(Probe.class).invocations.get()).isEqualTo(2);
                });
    }

    @Test
    void should_fail_the_start_naming_bean_and_method_when_a_hedged_method_is_private() {
        runner.withBean("privateMethod", PrivateMethod.class, PrivateMethod::new)
                .run(ctx -> assertThat(ctx.getStartupFailure())
                        .rootCause()
                        .isInstanceOf(UnhedgeableMethodException.class)
                        .hasMessageStartingWith("@Hedged method " + PrivateMethod.class.getName()
                                + ".read() of bean 'privateMethod' cannot be hedged: it is private"));
    }

    @Test
    void should_fail_the_start_naming_bean_and_method_when_a_hedged_method_is_static() {
        runner.withBean("staticMethod", StaticMethod.class, StaticMethod::new)
                .run(ctx -> assertThat(ctx.getStartupFailure())
                        .rootCause()
                        .isInstanceOf(UnhedgeableMethodException.class)
                        .hasMessageStartingWith("@Hedged method " + StaticMethod.class.getName()
                                + ".read() of bean 'staticMethod' cannot be hedged: it is static"));
    }

    @Test
    void should_fail_the_start_naming_bean_and_method_when_the_instance_name_is_blank() {
        runner.withBean("blankName", BlankName.class, BlankName::new).run(ctx -> assertThat(ctx.getStartupFailure())
                .rootCause()
                .isInstanceOf(UnhedgeableMethodException.class)
                .hasMessage("@Hedged method " + BlankName.class.getName() + ".read() of bean 'blankName' cannot be"
                        + " hedged: @Hedged must name an instance, was blank"));
    }

    @Test
    void should_fail_when_a_prototype_bean_with_a_final_hedged_method_is_created() {
        runner.withUserConfiguration(PrototypeBeans.class).run(ctx -> {
            assertThat(ctx).as("a prototype is created on demand, not at start").hasNotFailed();
            assertThatThrownBy(() -> ctx.getBean(FinalMethod.class))
                    .rootCause()
                    .isInstanceOf(UnhedgeableMethodException.class)
                    .hasMessageContaining("bean 'finalPrototype'");
        });
    }

    @Test
    void should_hedge_each_instance_when_the_bean_is_a_prototype() {
        runner.withBean(Plain.class, () -> new Plain(null))
                .withUserConfiguration(PrototypeBeans.class)
                .run(ctx -> {
                    Plain a = ctx.getBean("plainPrototype", Plain.class);
                    Plain b = ctx.getBean("plainPrototype", Plain.class);
                    assertThat(a).isNotSameAs(b);
                    assertThat(a.read().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
                    assertThat(b.read().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 3");
                    assertThat(ctx.getBean(HedgeInstances.class)
                                    .executor("reads")
                                    .stats()
                                    .calls())
                            .isEqualTo(2);
                });
    }

    @Test
    void should_hedge_through_a_scoped_proxy_when_the_bean_has_a_scope_with_a_proxy_mode() {
        // the scoped proxy (as @RequestScope and Spring Cloud's @RefreshScope make) delegates to a
        // target bean that is proxied with the advisor; the scoped proxy itself is not
        runner.withUserConfiguration(ScopedBeans.class).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            Plain scoped = ctx.getBean("scopedPlain", Plain.class);
            assertThat(scoped.read().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
            // counted as the call completes, which may be just after the caller has its answer
            HedgedAdvisorTest.await(() ->
                    ctx.getBean(HedgeInstances.class).executor("reads").stats().hedgesWon() == 1);
        });
    }

    @Test
    void should_not_hedge_a_call_the_bean_makes_to_its_own_method_through_this() {
        // documented, as for @Transactional: only calls through the proxy are intercepted
        runner.withBean(SelfCalling.class, () -> new SelfCalling(null)).run(ctx -> {
            SelfCalling bean = ctx.getBean(SelfCalling.class);
            assertThat(bean.viaThis()).isNotDone(); // the primary's never-answering future, unhedged
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("reads")
                            .stats()
                            .calls())
                    .isZero();
        });
    }

    @Test
    void should_warn_once_at_start_naming_the_nearest_listed_instance_when_a_hedged_name_is_not_listed() {
        Logger logger = (Logger) LoggerFactory.getLogger(HedgedMethodsValidator.class);
        ListAppender<ILoggingEvent> warnings = new ListAppender<>();
        warnings.start();
        logger.addAppender(warnings);
        try {
            runner.withPropertyValues("hedge.instances.read.max-attempts=2", "hedge.instances.writes.max-attempts=1")
                    .withBean("plain", Plain.class, () -> new Plain(null))
                    .withBean("plainToo", Plain.class, () -> new Plain(null))
                    .run(ctx -> assertThat(ctx).hasNotFailed());
        } finally {
            logger.detachAppender(warnings);
        }
        assertThat(warnings.list).singleElement().satisfies(e -> assertThat(e.getFormattedMessage())
                .isEqualTo("@Hedged(\"reads\") on " + Plain.class.getName() + ".read() of bean 'plain' names no"
                        + " instance under hedge.instances (listed: read, writes); its calls use"
                        + " hedge.defaults; did you mean 'read'?"));
    }

    @Configuration(proxyBeanMethods = false)
    static class FinalBeans {
        @Bean
        FinalMethod finalMethod(Probe probe) {
            return new FinalMethod(probe);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class PrototypeBeans {
        @Bean
        @Scope(ConfigurableBeanFactory.SCOPE_PROTOTYPE)
        FinalMethod finalPrototype(Probe probe) {
            return new FinalMethod(probe);
        }

        @Bean
        @Scope(ConfigurableBeanFactory.SCOPE_PROTOTYPE)
        Plain plainPrototype(Probe probe) {
            return new Plain(probe);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ScopedBeans {
        @Bean
        @Scope(value = ConfigurableBeanFactory.SCOPE_PROTOTYPE, proxyMode = ScopedProxyMode.TARGET_CLASS)
        Plain scopedPlain(Probe probe) {
            return new Plain(probe);
        }
    }

    public static class Probe {
        final AtomicInteger invocations = new AtomicInteger();

        CompletableFuture<String> firstNeverAnswers() {
            int n = invocations.incrementAndGet();
            return n == 1 ? new CompletableFuture<>() : CompletableFuture.completedFuture("answer " + n);
        }
    }

    public interface Reader {
        CompletableFuture<String> read();
    }

    public static class FinalMethod implements Reader {
        private final Probe probe;

        FinalMethod(Probe probe) {
            this.probe = probe;
        }

        @Override
        @Hedged("reads")
        public final CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    public static class PrivateMethod {
        @Hedged("reads")
        private CompletableFuture<String> read() {
            return new CompletableFuture<>();
        }

        public CompletableFuture<String> call() {
            return read();
        }
    }

    public static class BlankName {
        @Hedged(" ")
        public CompletableFuture<String> read() {
            return new CompletableFuture<>();
        }
    }

    public static class StaticMethod {
        @Hedged("reads")
        public static CompletableFuture<String> read() {
            return new CompletableFuture<>();
        }
    }

    public static class Plain {
        private final Probe probe;

        Plain(Probe probe) {
            this.probe = probe;
        }

        @Hedged("reads")
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    public static class SelfCalling {
        private final Probe probe;

        SelfCalling(Probe probe) {
            this.probe = probe != null ? probe : new Probe();
        }

        @Hedged("reads")
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }

        public CompletableFuture<String> viaThis() {
            return read();
        }
    }
}

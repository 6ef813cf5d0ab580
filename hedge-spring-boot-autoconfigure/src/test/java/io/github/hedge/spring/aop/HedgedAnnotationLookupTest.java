package io.github.hedge.spring.aop;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.HedgeBudget;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.autoconfigure.HedgeAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeConfigCustomizer;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AliasFor;

/**
 * Where {@code @Hedged} may be put, as users put {@code @Transactional}: on an interface method or
 * type the bean implements, on a superclass method it overrides, as a meta-annotation; with
 * class-based (CGLIB) and interface-based (JDK) proxies alike. The primary attempt of each call
 * never answers on its own, so a call answers only if it was hedged.
 */
class HedgedAnnotationLookupTest {
    private static final long WAIT_SECONDS = 10;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, HedgeAutoConfiguration.class))
            .withUserConfiguration(Beans.class)
            .withPropertyValues(
                    "hedge.defaults.delay.fixed=1ms",
                    "hedge.defaults.idempotent=true",
                    "hedge.instances.reads.max-attempts=2",
                    "hedge.instances.other.max-attempts=2");

    @ParameterizedTest(name = "proxy-target-class={0}")
    @ValueSource(booleans = {true, false})
    void should_hedge_when_the_annotation_is_on_the_interface_method(boolean classBased) {
        run(
                classBased,
                ctx -> assertHedged(ctx, ctx.getBean(InterfaceMethod.class), b -> b.read(), "reads", classBased));
    }

    @ParameterizedTest(name = "proxy-target-class={0}")
    @ValueSource(booleans = {true, false})
    void should_hedge_when_the_annotation_is_on_the_interface_type(boolean classBased) {
        run(classBased, ctx -> assertHedged(ctx, ctx.getBean(InterfaceType.class), b -> b.read(), "reads", classBased));
    }

    @ParameterizedTest(name = "proxy-target-class={0}")
    @ValueSource(booleans = {true, false})
    void should_hedge_when_the_annotation_is_on_the_superclass_method_the_bean_overrides(boolean classBased) {
        run(classBased, ctx -> assertHedged(ctx, ctx.getBean(Sub.class), b -> b.read(), "reads", true));
    }

    @ParameterizedTest(name = "proxy-target-class={0}")
    @ValueSource(booleans = {true, false})
    void should_hedge_when_the_annotation_is_a_meta_annotation(boolean classBased) {
        run(classBased, ctx -> assertHedged(ctx, ctx.getBean(MetaAnnotated.class), b -> b.read(), "reads", true));
    }

    @ParameterizedTest(name = "proxy-target-class={0}")
    @ValueSource(booleans = {true, false})
    void should_hedge_through_the_composed_annotation_instance_when_it_aliases_the_value(boolean classBased) {
        run(classBased, ctx -> assertHedged(ctx, ctx.getBean(AliasAnnotated.class), b -> b.read(), "other", true));
    }

    @ParameterizedTest(name = "proxy-target-class={0}")
    @ValueSource(booleans = {true, false})
    void should_hedge_when_the_annotation_is_on_a_generic_interface_method(boolean classBased) {
        run(classBased, ctx -> assertHedged(ctx, ctx.getBean(GenericReader.class), b -> b.read(), "reads", classBased));
    }

    @ParameterizedTest(name = "proxy-target-class={0}")
    @ValueSource(booleans = {true, false})
    void should_use_the_implementation_annotation_when_the_interface_method_is_annotated_too(boolean classBased) {
        run(classBased, ctx -> assertHedged(ctx, ctx.getBean(BothAnnotated.class), b -> b.read(), "other", classBased));
    }

    @Test
    void should_hedge_through_jdk_proxies_when_aspectj_is_absent_and_proxy_target_class_is_false() {
        // Spring Boot registers no auto-proxy creator in this case; hedge registers one
        runner.withClassLoader(new FilteredClassLoader("org.aspectj"))
                .withPropertyValues("spring.aop.proxy-target-class=false")
                .run(ctx -> assertHedged(ctx, ctx.getBean(InterfaceMethod.class), b -> b.read(), "reads", false));
    }

    @Test
    void should_not_hedge_the_methods_object_declares_when_the_type_is_annotated() {
        runner.run(ctx -> {
            TypeAnnotated bean = ctx.getBean(TypeAnnotated.class);
            assertThat(AopUtils.isAopProxy(bean)).isTrue();
            bean.toString();
            bean.hashCode();
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("reads")
                            .stats()
                            .calls())
                    .isZero();
            assertThat(bean.read().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("reads")
                            .stats()
                            .calls())
                    .isEqualTo(1);
        });
    }

    private void run(boolean classBased, ContextCheck check) {
        runner.withPropertyValues("spring.aop.proxy-target-class=" + classBased).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            check.accept(ctx);
        });
    }

    @FunctionalInterface
    private interface ContextCheck {
        void accept(AssertableApplicationContext ctx) throws Exception;
    }

    /**
     * The call answered from its hedge (the second invocation), through the named instance, and the
     * bean is the kind of proxy the setting asks for (a bean that implements no interface is always
     * class-based).
     */
    private static <T> void assertHedged(
            AssertableApplicationContext ctx,
            T bean,
            Function<T, CompletableFuture<String>> read,
            String instance,
            boolean classBased)
            throws Exception {
        assertThat(AopUtils.isCglibProxy(bean)).as("class-based proxy").isEqualTo(classBased);
        assertThat(AopUtils.isJdkDynamicProxy(bean)).as("JDK proxy").isEqualTo(!classBased);
        CompletableFuture<String> call = read.apply(bean);
        assertThat(call.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
        Probe probe = ctx.getBean(Probe.class);
        assertThat(probe.invocations.get()).isEqualTo(2);
        // counted as the call completes, which may be just after the caller has its answer
        HedgedAdvisorTest.await(() ->
                ctx.getBean(HedgeInstances.class).executor(instance).stats().hedgesWon() == 1);
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        Probe probe() {
            return new Probe();
        }

        @Bean
        InterfaceMethodImpl interfaceMethod(Probe probe) {
            return new InterfaceMethodImpl(probe);
        }

        @Bean
        InterfaceTypeImpl interfaceType(Probe probe) {
            return new InterfaceTypeImpl(probe);
        }

        @Bean
        Sub sub(Probe probe) {
            return new Sub(probe);
        }

        @Bean
        MetaAnnotated metaAnnotated(Probe probe) {
            return new MetaAnnotated(probe);
        }

        @Bean
        BothAnnotatedImpl bothAnnotated(Probe probe) {
            return new BothAnnotatedImpl(probe);
        }

        @Bean
        AliasAnnotated aliasAnnotated(Probe probe) {
            return new AliasAnnotated(probe);
        }

        @Bean
        GenericReaderImpl genericReader(Probe probe) {
            return new GenericReaderImpl(probe);
        }

        @Bean
        TypeAnnotated typeAnnotated(Probe probe) {
            return new TypeAnnotated(probe);
        }

        @Bean
        HedgeConfigCustomizer unlimitedBudget() {
            return (name, builder) -> builder.budget(HedgeBudget.unlimited());
        }
    }

    public static class Probe {
        final AtomicInteger invocations = new AtomicInteger();

        CompletableFuture<String> firstNeverAnswers() {
            int n = invocations.incrementAndGet();
            return n == 1 ? new CompletableFuture<>() : CompletableFuture.completedFuture("answer " + n);
        }
    }

    public interface InterfaceMethod {
        @Hedged("reads")
        CompletableFuture<String> read();
    }

    public static class InterfaceMethodImpl implements InterfaceMethod {
        private final Probe probe;

        InterfaceMethodImpl(Probe probe) {
            this.probe = probe;
        }

        @Override
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    @Hedged("reads")
    public interface InterfaceType {
        CompletableFuture<String> read();
    }

    public static class InterfaceTypeImpl implements InterfaceType {
        private final Probe probe;

        InterfaceTypeImpl(Probe probe) {
            this.probe = probe;
        }

        @Override
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    public static class Base {
        final Probe probe;

        Base(Probe probe) {
            this.probe = probe;
        }

        @Hedged("reads")
        public CompletableFuture<String> read() {
            return CompletableFuture.completedFuture("the base's, never called");
        }
    }

    public static class Sub extends Base {
        Sub(Probe probe) {
            super(probe);
        }

        @Override
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    /** A composed annotation, as applications define their own. */
    @Target({ElementType.METHOD, ElementType.TYPE})
    @Retention(RetentionPolicy.RUNTIME)
    @Hedged("reads")
    public @interface HedgedRead {}

    public static class MetaAnnotated {
        private final Probe probe;

        MetaAnnotated(Probe probe) {
            this.probe = probe;
        }

        @HedgedRead
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    /** A composed annotation whose attribute names the instance. */
    @Target({ElementType.METHOD, ElementType.TYPE})
    @Retention(RetentionPolicy.RUNTIME)
    @Hedged("unused")
    public @interface HedgedVia {
        @AliasFor(annotation = Hedged.class, attribute = "value")
        String instance();
    }

    public static class AliasAnnotated {
        private final Probe probe;

        AliasAnnotated(Probe probe) {
            this.probe = probe;
        }

        @HedgedVia(instance = "other")
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    /** A generic interface: the implementation's method has a bridge. */
    public interface GenericReader<T> {
        @Hedged("reads")
        CompletableFuture<T> read();
    }

    public static class GenericReaderImpl implements GenericReader<String> {
        private final Probe probe;

        GenericReaderImpl(Probe probe) {
            this.probe = probe;
        }

        @Override
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    public interface BothAnnotated {
        @Hedged("reads")
        CompletableFuture<String> read();
    }

    public static class BothAnnotatedImpl implements BothAnnotated {
        private final Probe probe;

        BothAnnotatedImpl(Probe probe) {
            this.probe = probe;
        }

        @Override
        @Hedged("other")
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    @Hedged("reads")
    public static class TypeAnnotated {
        private final Probe probe;

        TypeAnnotated(Probe probe) {
            this.probe = probe;
        }

        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }
}

package io.github.hedge.spring.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.tuple;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.event.AttemptRecord;
import io.github.hedge.core.event.AttemptRecord.AttemptOutcome;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.annotation.Hedged.Idempotence;
import io.github.hedge.spring.boot.autoconfigure.HedgeAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeConfigCustomizer;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.assertj.core.api.ThrowingConsumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @Hedged} through a real Spring context: AOP proxies, the auto-configured aspect and
 * executors. The primary attempt of a hedged call never answers on its own, so only a hedge can
 * answer; a 1 ms fixed delay and an unlimited budget make the hedge go out at once.
 */
public class HedgedAdvisorTest {
    private static final long WAIT_SECONDS = 10;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, HedgeAutoConfiguration.class))
            .withUserConfiguration(Beans.class)
            .withPropertyValues(
                    "hedge.defaults.delay.fixed=1ms",
                    "hedge.instances.reads.idempotent=true",
                    "hedge.instances.writes.max-attempts=3",
                    // hedges only after a failure: attempt n is always the n-th invocation
                    "hedge.instances.failing.idempotent=true",
                    "hedge.instances.failing.max-attempts=3",
                    "hedge.instances.failing.delay.fixed=10s");

    @Test
    void should_answer_from_the_hedge_and_cancel_the_primary_when_an_async_idempotent_call_is_slow() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(backend.readAsync().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
            assertThat(probe.invocations.get()).isEqualTo(2);
            await(() -> probe.pending.get(0).isCancelled());
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("reads")
                            .stats()
                            .hedgesWon())
                    .isEqualTo(1);
        });
    }

    @Test
    void should_answer_from_the_hedge_and_interrupt_the_primary_when_a_blocking_idempotent_call_is_slow() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(backend.readBlocking()).isEqualTo("answer 2");
            assertThat(probe.interrupted.await(WAIT_SECONDS, TimeUnit.SECONDS))
                    .as("the losing attempt's thread is interrupted")
                    .isTrue();
            assertThat(probe.invocations.get()).isEqualTo(2);
            boolean hasVirtualThreads = Runtime.version().feature() >= 21;
            assertThat(probe.blockingThreads)
                    .as("attempts run on virtual threads when the JDK has them (JDK %s)", Runtime.version())
                    .hasSize(2)
                    .allMatch(t -> isVirtual(t) == hasVirtualThreads)
                    .doesNotContain(Thread.currentThread());
        });
    }

    private static boolean isVirtual(Thread t) {
        try {
            return (boolean) Thread.class.getMethod("isVirtual").invoke(t);
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }

    @Test
    void should_invoke_an_async_method_exactly_once_when_it_is_not_marked_idempotent() throws Exception {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            HedgeInstances instances = ctx.getBean(HedgeInstances.class);
            CompletableFuture<String> call = backend.writeAsync();
            await(() -> instances.executor("writes").stats().notHedgedNonIdempotent() == 1);
            probe.pending.get(0).complete("written");
            assertThat(call.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("written");
            assertThat(probe.invocations.get()).isEqualTo(1);
            assertThat(instances.executor("writes").stats().attempts()).isEqualTo(1);
        });
    }

    @Test
    void should_invoke_a_blocking_method_exactly_once_when_it_is_not_marked_idempotent() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            HedgeInstances instances = ctx.getBean(HedgeInstances.class);
            CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
                try {
                    return backend.writeBlocking();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            await(() -> instances.executor("writes").stats().notHedgedNonIdempotent() == 1);
            probe.release.countDown();
            assertThat(call.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("written 1");
            assertThat(probe.invocations.get()).isEqualTo(1);
        });
    }

    @Test
    void should_not_hedge_when_the_annotation_says_not_idempotent_on_an_idempotent_instance() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            CompletableFuture<String> call = backend.readButNotIdempotent();
            await(() ->
                    ctx.getBean(HedgeInstances.class).executor("reads").stats().notHedgedNonIdempotent() == 1);
            probe.pending.get(0).complete("once");
            assertThat(call.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("once");
            assertThat(probe.invocations.get()).isEqualTo(1);
        });
    }

    @Test
    void should_hedge_when_the_annotation_says_idempotent_on_an_instance_that_is_not() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(backend.writeButIdempotent().get(WAIT_SECONDS, TimeUnit.SECONDS))
                    .isEqualTo("answer 2");
            assertThat(probe.invocations.get()).isEqualTo(2);
        });
    }

    @Test
    void should_rethrow_the_method_exception_unchanged_when_the_only_attempt_fails() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThatThrownBy(backend::failBlocking)
                    .isInstanceOf(IOException.class)
                    .hasMessage("disk full");
            assertThatThrownBy(() -> backend.failAsync().get(WAIT_SECONDS, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IOException.class);
            assertThat(probe.invocations.get()).isEqualTo(2);
        });
    }

    @Test
    void should_throw_the_primary_exception_unchanged_when_every_attempt_of_a_blocking_call_fails() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            List<CallCompleted> completed = completedCalls(ctx.getBean(HedgeInstances.class), "failing");
            Throwable thrown = catchThrowable(backend::failEveryAttemptBlocking);
            assertThat(probe.failures).hasSize(3);
            assertPrimaryFailureUnchanged(thrown, probe);
            assertEveryAttemptFailedInTheTrace(completed);
        });
    }

    @Test
    void should_complete_with_the_primary_exception_unchanged_when_every_attempt_of_an_async_call_fails() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            List<CallCompleted> completed = completedCalls(ctx.getBean(HedgeInstances.class), "failing");
            CompletableFuture<String> call = backend.failEveryAttemptAsync();
            assertThatThrownBy(() -> call.get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
            assertThat(probe.failures).hasSize(3);
            assertPrimaryFailureUnchanged(call.handle((v, e) -> e).join(), probe);
            assertEveryAttemptFailedInTheTrace(completed);
        });
    }

    @Test
    void should_complete_the_future_with_the_exception_unchanged_when_an_async_method_throws_instead_of_returning() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            CompletableFuture<String> call = backend.throwInsteadOfReturning(); // not thrown here
            assertThatThrownBy(() -> call.get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
            assertThat(probe.failures).hasSize(3);
            assertPrimaryFailureUnchanged(call.handle((v, e) -> e).join(), probe);
        });
    }

    private static List<CallCompleted> completedCalls(HedgeInstances instances, String name) {
        List<CallCompleted> completed = new CopyOnWriteArrayList<>();
        instances.executor(name).events().subscribe(CallCompleted.class, completed::add);
        return completed;
    }

    /** The caller sees the very exception the primary threw: no wrapper, nothing attached. */
    private static void assertPrimaryFailureUnchanged(Throwable thrown, Probe probe) {
        assertThat(thrown)
                .isSameAs(probe.failures.get(0))
                .hasMessage("attempt 1")
                .hasNoCause();
        assertThat(thrown.getSuppressed())
                .as("the other attempts' failures are not attached to the primary's")
                .isEmpty();
    }

    /** The other attempts' failures are in the call's per-attempt trace instead. */
    private static void assertEveryAttemptFailedInTheTrace(List<CallCompleted> completed) throws InterruptedException {
        await(() -> completed.size() == 1);
        assertThat(completed.get(0).outcome()).isEqualTo(CallCompleted.CallOutcome.FAILURE);
        assertThat(completed.get(0).attempts())
                .extracting(AttemptRecord::attemptNumber, AttemptRecord::outcome, AttemptRecord::errorType)
                .containsExactly(
                        tuple(1, AttemptOutcome.FAILED, IOException.class.getName()),
                        tuple(2, AttemptOutcome.FAILED, IOException.class.getName()),
                        tuple(3, AttemptOutcome.FAILED, IOException.class.getName()));
    }

    @Test
    void should_fail_the_start_naming_the_method_when_it_returns_a_future() {
        runner.withBean(FutureResult.class, FutureResult::new).run(ctx -> assertThat(ctx.getStartupFailure())
                .rootCause()
                .isInstanceOf(UnhedgeableMethodException.class)
                .satisfies(refusal(FutureResult.class, "read", "java.util.concurrent.Future")));
    }

    @Test
    void should_fail_the_start_naming_the_method_when_it_returns_a_reactive_streams_publisher() {
        runner.withBean(PublisherResult.class, PublisherResult::new).run(ctx -> assertThat(ctx.getStartupFailure())
                .rootCause()
                .satisfies(refusal(PublisherResult.class, "read", Publisher.class.getName())));
        // a Mono is a class implementing a sub-interface of Publisher
        runner.withBean(MonoResult.class, MonoResult::new).run(ctx -> assertThat(ctx.getStartupFailure())
                .rootCause()
                .satisfies(refusal(MonoResult.class, "read", MonoLike.class.getName())));
        // the JDK's own reactive-streams interface
        runner.withBean(FlowResult.class, FlowResult::new).run(ctx -> assertThat(ctx.getStartupFailure())
                .rootCause()
                .satisfies(refusal(FlowResult.class, "read", java.util.concurrent.Flow.Publisher.class.getName())));
    }

    /** The refusal names the bean, the method and its result type, and says why it cannot be hedged. */
    private static ThrowingConsumer<Throwable> refusal(Class<?> type, String method, String resultType) {
        return e -> assertThat(e.getMessage())
                .contains("@Hedged method " + type.getName() + "." + method + "() of bean '")
                .contains("its result, a " + resultType)
                .contains("completes after the method returns")
                .contains("nothing would be hedged");
    }

    @Test
    void should_hedge_through_an_interface_proxy_when_the_annotation_is_on_the_implementation() {
        runner.withPropertyValues("spring.aop.proxy-target-class=false").run(ctx -> {
            Reader reader = ctx.getBean(Reader.class);
            assertThat(AopUtils.isJdkDynamicProxy(reader)).isTrue();
            assertThat(reader.read().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
            assertThat(ctx.getBean(Probe.class).invocations.get()).isEqualTo(2);
        });
    }

    @Test
    void should_use_the_defaults_when_the_instance_is_not_listed() {
        runner.run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(backend.unlisted()).isEqualTo("unlisted");
            assertThat(ctx.getBean(HedgeInstances.class).names()).contains("unlisted");
        });
    }

    @Test
    void should_log_once_at_info_when_an_unlisted_instance_is_called_repeatedly() {
        Logger logger = (Logger) LoggerFactory.getLogger(HedgeInstances.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        Level level = logger.getLevel();
        logger.setLevel(Level.INFO);
        try {
            runner.run(ctx -> {
                Backend backend = ctx.getBean(Backend.class);
                for (int i = 0; i < 3; i++) {
                    assertThat(backend.unlisted()).isEqualTo("unlisted");
                }
                // a listed instance logs nothing of the kind
                assertThat(backend.readAsync().get(WAIT_SECONDS, TimeUnit.SECONDS))
                        .isEqualTo("answer 2");
            });
        } finally {
            logger.detachAppender(appender);
            logger.setLevel(level);
        }
        assertThat(appender.list)
                .filteredOn(e -> e.getFormattedMessage().contains("is not listed"))
                .singleElement()
                .satisfies(e -> {
                    assertThat(e.getLevel()).isEqualTo(Level.INFO);
                    assertThat(e.getFormattedMessage())
                            .isEqualTo("hedge instance 'unlisted' is not listed under hedge.instances; it uses"
                                    + " hedge.defaults (check the name if that is not intended)");
                });
    }

    @Test
    void should_hedge_every_public_method_when_the_type_is_annotated() {
        runner.run(ctx -> {
            TypeLevel bean = ctx.getBean(TypeLevel.class);
            assertThat(bean.read().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("reads")
                            .stats()
                            .calls())
                    .isEqualTo(1);
        });
    }

    @Test
    void should_hedge_annotated_methods_when_aspectj_is_absent() {
        // public test beans: CGLIB subclasses them from the filtering class loader
        runner.withClassLoader(new FilteredClassLoader("org.aspectj")).run(ctx -> {
            Backend backend = ctx.getBean(Backend.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(AopUtils.isAopProxy(backend)).isTrue();
            assertThat(backend.readAsync().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
            assertThat(probe.invocations.get()).isEqualTo(2);
        });
    }

    /** Waits at most {@link #WAIT_SECONDS} for {@code condition}, polling every 5 ms. */
    static void await(BooleanSupplier condition) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(WAIT_SECONDS))
                .pollInterval(Duration.ofMillis(5))
                .until(condition::getAsBoolean);
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        Probe probe() {
            return new Probe();
        }

        @Bean
        Backend backend(Probe probe) {
            return new Backend(probe);
        }

        @Bean
        Reader reader(Probe probe) {
            return new ReaderImpl(probe);
        }

        @Bean
        TypeLevel typeLevel(Probe probe) {
            return new TypeLevel(probe);
        }

        /** Lets every hedge through: the budget is not what these tests are about. */
        @Bean
        HedgeConfigCustomizer unlimitedBudget() {
            return (name, builder) -> builder.budget(HedgeBudget.unlimited());
        }
    }

    /** What the backend saw; a bean of its own, since the backend itself is a proxy. */
    public static class Probe {
        final AtomicInteger invocations = new AtomicInteger();
        final List<CompletableFuture<String>> pending = new CopyOnWriteArrayList<>();
        final CountDownLatch interrupted = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final List<Thread> blockingThreads = new CopyOnWriteArrayList<>();
        final List<IOException> failures = new CopyOnWriteArrayList<>();

        IOException fail() {
            IOException e = new IOException("attempt " + invocations.incrementAndGet());
            failures.add(e);
            return e;
        }

        CompletableFuture<String> firstNeverAnswers() {
            int n = invocations.incrementAndGet();
            if (n == 1) {
                CompletableFuture<String> never = new CompletableFuture<>();
                pending.add(never);
                return never;
            }
            return CompletableFuture.completedFuture("answer " + n);
        }
    }

    /** A backend whose first invocation never answers by itself. */
    public static class Backend {
        private final Probe probe;
        private final AtomicInteger invocations;
        private final CountDownLatch interrupted;
        private final CountDownLatch release;

        Backend(Probe probe) {
            this.probe = probe;
            this.invocations = probe.invocations;
            this.interrupted = probe.interrupted;
            this.release = probe.release;
        }

        private CompletableFuture<String> firstNeverAnswers() {
            return probe.firstNeverAnswers();
        }

        @Hedged("reads")
        public CompletableFuture<String> readAsync() {
            return firstNeverAnswers();
        }

        @Hedged("reads")
        public String readBlocking() throws InterruptedException {
            probe.blockingThreads.add(Thread.currentThread());
            int n = invocations.incrementAndGet();
            if (n == 1) {
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    interrupted.countDown();
                    throw e;
                }
            }
            return "answer " + n;
        }

        @Hedged("writes")
        public CompletableFuture<String> writeAsync() {
            return firstNeverAnswers();
        }

        @Hedged("writes")
        public String writeBlocking() throws InterruptedException {
            int n = invocations.incrementAndGet();
            release.await();
            return "written " + n;
        }

        @Hedged(value = "reads", idempotent = Idempotence.NOT_IDEMPOTENT)
        public CompletableFuture<String> readButNotIdempotent() {
            return firstNeverAnswers();
        }

        @Hedged(value = "writes", idempotent = Idempotence.IDEMPOTENT)
        public CompletableFuture<String> writeButIdempotent() {
            return firstNeverAnswers();
        }

        @Hedged("writes")
        public String failBlocking() throws IOException {
            invocations.incrementAndGet();
            throw new IOException("disk full");
        }

        @Hedged("writes")
        public CompletableFuture<String> failAsync() {
            invocations.incrementAndGet();
            return CompletableFuture.failedFuture(new IOException("disk full"));
        }

        @Hedged("failing")
        public String failEveryAttemptBlocking() throws IOException {
            throw probe.fail();
        }

        @Hedged("failing")
        public CompletableFuture<String> throwInsteadOfReturning() throws IOException {
            throw probe.fail();
        }

        @Hedged("failing")
        public CompletableFuture<String> failEveryAttemptAsync() {
            return CompletableFuture.failedFuture(probe.fail());
        }

        @Hedged("unlisted")
        public String unlisted() {
            return "unlisted";
        }
    }

    public static class FutureResult {
        @Hedged("reads")
        public java.util.concurrent.Future<String> read() {
            return new CompletableFuture<>();
        }
    }

    public static class PublisherResult {
        @Hedged("reads")
        public Publisher<String> read() {
            return subscriber -> {};
        }
    }

    public static class MonoResult {
        @Hedged("reads")
        public MonoLike<String> read() {
            return new MonoLike<>() {
                @Override
                public void subscribe(Subscriber<? super String> subscriber) {}
            };
        }
    }

    public static class FlowResult {
        @Hedged("reads")
        public java.util.concurrent.Flow.Publisher<String> read() {
            return subscriber -> {};
        }
    }

    /**
     * Shaped like reactor's {@code Mono}, an abstract class implementing {@code CorePublisher}, a
     * sub-interface of {@link Publisher} (reactor is not on the test class path; the Reactive
     * Streams API is, through the optional Cassandra driver).
     */
    public interface CorePublisherLike<T> extends Publisher<T> {}

    public abstract static class MonoLike<T> implements CorePublisherLike<T> {}

    /** An interface, for JDK dynamic proxies. */
    public interface Reader {
        CompletableFuture<String> read();
    }

    public static class ReaderImpl implements Reader {
        private final Probe probe;

        ReaderImpl(Probe probe) {
            this.probe = probe;
        }

        @Override
        @Hedged("reads")
        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }

    @Hedged("reads")
    public static class TypeLevel {
        private final Probe probe;

        TypeLevel(Probe probe) {
            this.probe = probe;
        }

        public CompletableFuture<String> read() {
            return probe.firstNeverAnswers();
        }
    }
}

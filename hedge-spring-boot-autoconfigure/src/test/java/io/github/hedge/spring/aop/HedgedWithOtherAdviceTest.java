package io.github.hedge.spring.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeStats;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.autoconfigure.HedgeAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeConfigCustomizer;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;

/**
 * {@code @Hedged} next to Spring's {@code @Async}, whose advisor always runs outside hedge's: the
 * method's body runs on {@code @Async}'s thread, blocks, and returns a completed future. The
 * attempt that enters the body first blocks until interrupted; only the other one can answer.
 */
class HedgedWithOtherAdviceTest {
    private static final long WAIT_SECONDS = 10;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, HedgeAutoConfiguration.class))
            .withUserConfiguration(AsyncOn.class)
            .withPropertyValues("hedge.defaults.delay.fixed=1ms", "hedge.instances.reads.idempotent=true")
            .withBean(
                    "unlimitedBudget",
                    HedgeConfigCustomizer.class,
                    () -> (name, b) -> b.budget(HedgeBudget.unlimited()))
            .withBean(Probe.class)
            .withBean(AsyncBackend.class);

    /**
     * Which attempt enters the body first is up to the threads (a 1 ms delay on a loaded machine), so
     * the test counts what each attempt did: the one that entered first blocks and is interrupted, the
     * other one answers, and the call ends as one success from two attempts.
     */
    @Test
    void should_answer_from_the_other_attempt_and_interrupt_the_blocked_one_when_an_async_annotated_method_blocks() {
        runner.run(ctx -> {
            AsyncBackend backend = ctx.getBean(AsyncBackend.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(backend.read().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
            assertThat(probe.interrupted.await(WAIT_SECONDS, TimeUnit.SECONDS))
                    .as("the losing attempt's thread is interrupted")
                    .isTrue();
            assertThat(probe.invocations.get()).isEqualTo(2);
            // counted as the call completes, which may be just after the caller has its answer
            HedgedAdvisorTest.await(() -> {
                HedgeStats stats =
                        ctx.getBean(HedgeInstances.class).executor("reads").stats();
                return stats.successes() == 1 && stats.attempts() == 2 && stats.hedgesSent() == 1;
            });
        });
    }

    @Test
    void should_hedge_an_async_annotated_method_when_it_returns_a_future_or_nothing() {
        runner.run(ctx -> {
            AsyncBackend backend = ctx.getBean(AsyncBackend.class);
            Probe probe = ctx.getBean(Probe.class);
            assertThat(backend.readFuture().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("answer 2");
            probe.reset();
            backend.fireAndForget();
            assertThat(probe.answered.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(probe.answers).containsExactly("answer 2");
        });
    }

    @Test
    void should_complete_with_the_method_exception_unchanged_when_an_async_annotated_method_fails() {
        runner.run(ctx -> {
            AsyncBackend backend = ctx.getBean(AsyncBackend.class);
            assertThatThrownBy(() -> backend.fail().get(WAIT_SECONDS, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(IOException.class)
                    .hasMessage("disk full")
                    .hasNoCause();
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncOn {}

    public static class Probe {
        final AtomicInteger invocations = new AtomicInteger();
        volatile CountDownLatch interrupted = new CountDownLatch(1);
        final CountDownLatch answered = new CountDownLatch(1);
        final List<String> answers = new CopyOnWriteArrayList<>();

        void reset() {
            invocations.set(0);
            interrupted = new CountDownLatch(1);
        }

        /** The first invocation blocks until interrupted; the others answer at once. */
        String firstBlocks() throws InterruptedException {
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
    }

    public static class AsyncBackend {
        private final Probe probe;

        public AsyncBackend(Probe probe) {
            this.probe = probe;
        }

        @Async
        @Hedged("reads")
        public CompletableFuture<String> read() throws InterruptedException {
            return CompletableFuture.completedFuture(probe.firstBlocks());
        }

        @Async
        @Hedged("reads")
        public Future<String> readFuture() throws InterruptedException {
            return CompletableFuture.completedFuture(probe.firstBlocks());
        }

        @Async
        @Hedged("reads")
        public void fireAndForget() throws InterruptedException {
            String answer = probe.firstBlocks();
            probe.answers.add(answer);
            probe.answered.countDown();
        }

        @Async
        @Hedged("reads")
        public CompletableFuture<String> fail() throws IOException {
            throw new IOException("disk full");
        }
    }
}

package io.github.hedge.spring.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.hedge.core.HedgeStats;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.CallCompleted;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.actuate.HedgesEndpoint;
import io.github.hedge.spring.boot.autoconfigure.HedgeAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeEndpointAutoConfiguration;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import io.github.hedge.spring.boot.autoconfigure.HedgeMetricsAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.context.Context;

/**
 * {@code @Hedged} on methods returning reactor's {@code Mono}, through a real Spring context: each
 * attempt invokes the method anew and subscribes to its {@code Mono}; the method's first
 * invocation returns a {@code Mono} that never answers, so only a hedge can answer.
 */
class HedgedMonoMethodTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, HedgeAutoConfiguration.class))
            .withBean(Probe.class, Probe::new)
            .withBean(MonoBackend.class)
            .withPropertyValues("hedge.defaults.delay.fixed=1ms", "hedge.instances.reads.idempotent=true");

    /** What the bean's methods did: invocations (one per attempt), cancellations of their Monos. */
    public static class Probe {
        final AtomicInteger invocations = new AtomicInteger();
        final AtomicInteger cancelled = new AtomicInteger();
        final List<String> tenants = new CopyOnWriteArrayList<>();
        final Sinks.One<String> written = Sinks.one();
    }

    public static class MonoBackend {
        private final AtomicInteger invocations;
        private final AtomicInteger cancelled;
        private final List<String> tenants;
        private final Sinks.One<String> written;

        public MonoBackend(Probe probe) {
            this.invocations = probe.invocations;
            this.cancelled = probe.cancelled;
            this.tenants = probe.tenants;
            this.written = probe.written;
        }

        @Hedged("reads")
        public Mono<String> read() {
            int n = invocations.incrementAndGet();
            return Mono.deferContextual(view -> {
                view.<String>getOrEmpty("tenant").ifPresent(tenants::add);
                return n == 1 ? Mono.<String>never().doOnCancel(cancelled::incrementAndGet) : Mono.just("answer " + n);
            });
        }

        @Hedged("reads")
        public Mono<String> stall() {
            invocations.incrementAndGet();
            return Mono.<String>never().doOnCancel(cancelled::incrementAndGet);
        }

        @Hedged("writes") // not idempotent: the instance's default
        public Mono<String> write() {
            invocations.incrementAndGet();
            return written.asMono();
        }
    }

    public static class FluxResult {
        @Hedged("reads")
        public Flux<String> readAll() {
            return Flux.just("a", "b");
        }
    }

    @Test
    void should_answer_from_the_hedge_and_cancel_the_primarys_subscription_when_a_mono_method_is_slow() {
        runner.run(ctx -> {
            MonoBackend backend = ctx.getBean(MonoBackend.class);
            Probe probe = ctx.getBean(Probe.class);
            HedgedExecutor executor = ctx.getBean(HedgeInstances.class).executor("reads");
            List<CallCompleted> calls = new CopyOnWriteArrayList<>();
            executor.events().subscribe(CallCompleted.class, calls::add);

            Mono<String> call = backend.read();
            assertThat(probe.invocations)
                    .as("nothing runs before a subscription")
                    .hasValue(0);

            assertThat(call.block(WAIT)).isEqualTo("answer 2");
            assertThat(probe.invocations).hasValue(2);
            assertThat(probe.cancelled).hasValue(1);
            await().until(() -> calls.size() == 1);
            assertThat(calls.get(0).winningAttempt()).isEqualTo(2);
            assertThat(calls.get(0).operation()).isEqualTo("HedgedMonoMethodTest.MonoBackend.read");
            assertThat(executor.stats().hedgesWon()).isEqualTo(1);
        });
    }

    @Test
    void should_make_each_subscription_a_hedged_call_when_a_mono_method_result_is_subscribed_twice() {
        runner.run(ctx -> {
            MonoBackend backend = ctx.getBean(MonoBackend.class);
            Probe probe = ctx.getBean(Probe.class);
            Mono<String> call = backend.read();
            assertThat(call.block(WAIT)).isEqualTo("answer 2");
            assertThat(call.block(WAIT)).isEqualTo("answer 3"); // the second call's primary answers at once
            assertThat(ctx.getBean(HedgeInstances.class)
                            .executor("reads")
                            .stats()
                            .calls())
                    .isEqualTo(2);
        });
    }

    @Test
    void should_subscribe_a_mono_method_exactly_once_when_it_is_not_idempotent() {
        runner.run(ctx -> {
            MonoBackend backend = ctx.getBean(MonoBackend.class);
            Probe probe = ctx.getBean(Probe.class);
            HedgedExecutor executor = ctx.getBean(HedgeInstances.class).executor("writes");
            List<String> results = new CopyOnWriteArrayList<>();
            backend.write().subscribe(results::add);
            await().until(() -> executor.stats().notHedgedNonIdempotent() == 1);

            probe.written.tryEmitValue("written");

            assertThat(results).containsExactly("written");
            assertThat(probe.invocations).hasValue(1);
            assertThat(executor.stats().attempts()).isEqualTo(1);
        });
    }

    @Test
    void should_cancel_every_attempt_when_the_subscriber_of_a_mono_method_disposes() {
        runner.run(ctx -> {
            MonoBackend backend = ctx.getBean(MonoBackend.class);
            Probe probe = ctx.getBean(Probe.class);
            HedgedExecutor executor = ctx.getBean(HedgeInstances.class).executor("reads");
            Disposable call = backend.stall().subscribe();
            await().until(() -> probe.invocations.get() == 2); // the hedge went out

            call.dispose();

            await().untilAsserted(() -> assertThat(probe.cancelled).hasValue(2));
            await().untilAsserted(() -> {
                assertThat(executor.stats().cancelled()).isEqualTo(1);
                assertThat(executor.stats().pendingAttempts()).isZero();
                assertThat(executor.stats().pendingTimers()).isZero();
            });
        });
    }

    @Test
    void should_give_every_attempt_the_subscribers_context_when_a_mono_method_is_hedged() {
        runner.run(ctx -> {
            MonoBackend backend = ctx.getBean(MonoBackend.class);
            Probe probe = ctx.getBean(Probe.class);
            String answer = backend.read()
                    .contextWrite(Context.of("tenant", "tenant-7"))
                    .block(WAIT);
            assertThat(answer).isEqualTo("answer 2");
            assertThat(probe.tenants).containsExactly("tenant-7", "tenant-7");
        });
    }

    @Test
    void should_count_a_mono_methods_calls_in_the_actuator_endpoint_and_the_metrics_when_a_hedge_wins() {
        runner.withConfiguration(AutoConfigurations.of(
                        HedgeEndpointAutoConfiguration.class, HedgeMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("management.endpoints.web.exposure.include=hedges")
                .run(ctx -> {
                    assertThat(ctx.getBean(MonoBackend.class).read().block(WAIT))
                            .isEqualTo("answer 2");

                    HedgeStats counters =
                            ctx.getBean(HedgesEndpoint.class).instance("reads").counters();
                    assertThat(counters.calls()).isEqualTo(1);
                    assertThat(counters.hedgesWon()).isEqualTo(1);
                    MeterRegistry registry = ctx.getBean(MeterRegistry.class);
                    await().untilAsserted(() -> assertThat(registry.get("hedge.hedges.won")
                                    .tag("name", "reads")
                                    .counter()
                                    .count())
                            .isEqualTo(1.0));
                });
    }

    @Test
    void should_fail_the_start_naming_the_bean_and_the_method_when_it_returns_a_flux() {
        runner.withBean("fluxResult", FluxResult.class, FluxResult::new).run(ctx -> assertThat(ctx.getStartupFailure())
                .rootCause()
                .isInstanceOf(UnhedgeableMethodException.class)
                .hasMessageContaining("@Hedged method " + FluxResult.class.getName()
                        + ".readAll() of bean 'fluxResult' cannot be hedged")
                .hasMessageContaining("its result, a reactor.core.publisher.Flux, is a stream")
                .hasMessageContaining("return a reactor Mono"));
    }
}

package io.github.hedge.spring.kotlin

import io.github.hedge.spring.annotation.Hedged
import io.github.hedge.spring.aop.UnhedgeableMethodException
import io.github.hedge.spring.boot.autoconfigure.HedgeAutoConfiguration
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.Test
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration
import org.springframework.boot.test.context.runner.ApplicationContextRunner

/** What the bean's suspend functions did: invocations (one per attempt) and cancellations. */
class Probe {
    val invocations = AtomicInteger()
    val cancelled = AtomicInteger()
    val written = CompletableDeferred<String>()
}

/** Open, so Spring's class-based proxy can override its functions (Spring's all-open plugin does this in apps). */
open class SuspendBackend(private val probe: Probe) {
    /** The first invocation never answers on its own: only a hedge can answer. */
    @Hedged("reads")
    open suspend fun read(): String {
        val n = probe.invocations.incrementAndGet()
        if (n == 1) {
            try {
                awaitCancellation()
            } finally {
                probe.cancelled.incrementAndGet()
            }
        }
        return "answer $n"
    }

    @Hedged("reads")
    open suspend fun stall(): String {
        probe.invocations.incrementAndGet()
        try {
            awaitCancellation()
        } finally {
            probe.cancelled.incrementAndGet()
        }
    }

    /** Not idempotent: the instance's default. */
    @Hedged("writes")
    open suspend fun write(): String {
        probe.invocations.incrementAndGet()
        return probe.written.await()
    }
}

open class FlowBackend {
    @Hedged("reads")
    open fun readAll(): kotlinx.coroutines.flow.Flow<String> = kotlinx.coroutines.flow.flowOf("a", "b")
}

/**
 * `@Hedged` on Kotlin suspend functions through a real Spring context: Spring's AOP runs the body
 * as a Mono, hedge runs that through hedge-reactor, and the proxy awaits the result.
 */
class HedgedSuspendFunctionTest {
    private val runner = ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(AopAutoConfiguration::class.java, HedgeAutoConfiguration::class.java))
        .withBean(Probe::class.java)
        .withBean(SuspendBackend::class.java)
        .withPropertyValues("hedge.defaults.delay.fixed=1ms", "hedge.instances.reads.idempotent=true")

    @Test
    fun should_answer_from_the_hedge_and_cancel_the_primary_when_a_suspend_function_is_slow() {
        runner.run { ctx ->
            val backend = ctx.getBean(SuspendBackend::class.java)
            val probe = ctx.getBean(Probe::class.java)

            val answer = runBlocking { withTimeout(10_000) { backend.read() } }

            assertThat(answer).isEqualTo("answer 2")
            assertThat(probe.invocations).hasValue(2)
            await().untilAsserted { assertThat(probe.cancelled).hasValue(1) }
            assertThat(ctx.getBean(HedgeInstances::class.java).executor("reads").stats().hedgesWon()).isEqualTo(1)
        }
    }

    @Test
    fun should_run_a_suspend_function_exactly_once_when_it_is_not_idempotent() {
        runner.run { ctx ->
            val backend = ctx.getBean(SuspendBackend::class.java)
            val probe = ctx.getBean(Probe::class.java)
            val executor = ctx.getBean(HedgeInstances::class.java).executor("writes")

            val call = GlobalScope.async(Dispatchers.Default) { backend.write() }
            await().until { executor.stats().notHedgedNonIdempotent() == 1L }
            probe.written.complete("written")

            assertThat(runBlocking { withTimeout(10_000) { call.await() } }).isEqualTo("written")
            assertThat(probe.invocations).hasValue(1)
            assertThat(executor.stats().attempts()).isEqualTo(1)
        }
    }

    @Test
    fun should_cancel_every_attempt_when_the_calling_coroutine_is_cancelled() {
        runner.run { ctx ->
            val backend = ctx.getBean(SuspendBackend::class.java)
            val probe = ctx.getBean(Probe::class.java)
            val executor = ctx.getBean(HedgeInstances::class.java).executor("reads")

            val call = GlobalScope.async(Dispatchers.Default, CoroutineStart.DEFAULT) { backend.stall() }
            await().until { probe.invocations.get() == 2 } // the hedge went out

            call.cancel()

            await().untilAsserted { assertThat(probe.cancelled).hasValue(2) }
            await().untilAsserted {
                assertThat(executor.stats().cancelled()).isEqualTo(1)
                assertThat(executor.stats().pendingAttempts()).isZero()
                assertThat(executor.stats().pendingTimers()).isZero()
            }
        }
    }

    @Test
    fun should_fail_the_start_naming_the_bean_and_the_method_when_it_returns_a_flow() {
        runner.withBean("flowBackend", FlowBackend::class.java).run { ctx ->
            assertThat(ctx.startupFailure)
                .rootCause()
                .isInstanceOf(UnhedgeableMethodException::class.java)
                .hasMessageContaining("readAll() of bean 'flowBackend' cannot be hedged")
                .hasMessageContaining("kotlinx.coroutines.flow.Flow")
        }
    }
}

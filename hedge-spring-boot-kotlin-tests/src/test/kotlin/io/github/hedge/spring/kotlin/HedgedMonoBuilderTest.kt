package io.github.hedge.spring.kotlin

import io.github.hedge.core.DelayPolicy
import io.github.hedge.core.HedgeConfig
import io.github.hedge.core.HedgedExecutor
import io.github.hedge.reactor.HedgeOperator
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.reactive.awaitSingle
import kotlinx.coroutines.reactor.mono
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.Test

/** Kotlin without Spring: a `mono { }` block hedged with [HedgeOperator] and awaited from a coroutine. */
class HedgedMonoBuilderTest {
    @Test
    fun should_run_the_block_again_for_the_hedge_and_cancel_the_first_when_the_first_is_slow() {
        val executor = HedgedExecutor.of(
            "kotlin",
            HedgeConfig.builder().delay(DelayPolicy.fixed(Duration.ofMillis(1))).idempotentByDefault(true).build(),
        )
        val runs = AtomicInteger()
        val cancelled = AtomicInteger()

        val answer = runBlocking {
            withTimeout(10_000) {
                mono {
                    val n = runs.incrementAndGet()
                    if (n == 1) {
                        try {
                            awaitCancellation()
                        } finally {
                            cancelled.incrementAndGet()
                        }
                    }
                    "answer $n"
                }.transformDeferred(HedgeOperator.of(executor)).awaitSingle()
            }
        }

        assertThat(answer).isEqualTo("answer 2")
        assertThat(runs).hasValue(2)
        await().untilAsserted { assertThat(cancelled).hasValue(1) }
        // the call's statistics are settled when the call ends, which may be just after the answer
        // reached the caller
        await().untilAsserted { assertThat(executor.stats().hedgesWon()).isEqualTo(1) }
    }
}

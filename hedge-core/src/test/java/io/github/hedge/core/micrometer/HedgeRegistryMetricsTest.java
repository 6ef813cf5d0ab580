package io.github.hedge.core.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class HedgeRegistryMetricsTest {

    @Test
    void should_follow_registry_when_executors_are_added_removed_and_replaced() {
        HedgedExecutorRegistry executors = HedgedExecutorRegistry.ofDefaults();
        executors.executor("users");
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        HedgeRegistryMetrics metrics = HedgeRegistryMetrics.of(executors);
        metrics.bindTo(meters);
        assertThat(meters.find("hedge.calls").tag("name", "users").counters()).isNotEmpty();

        HedgedExecutor orders = executors.executor("orders");
        orders.executeAsync(ctx -> CompletableFuture.completedFuture("x")).join();
        assertThat(meters.get("hedge.calls")
                        .tag("name", "orders")
                        .tag("outcome", "success")
                        .counter()
                        .count())
                .isEqualTo(1);

        executors.replace("orders", HedgedExecutor.of("orders", HedgeConfig.ofDefaults()));
        executors
                .find("orders")
                .orElseThrow()
                .executeAsync(ctx -> CompletableFuture.completedFuture("y"))
                .join();
        assertThat(meters.get("hedge.calls")
                        .tag("name", "orders")
                        .tag("outcome", "success")
                        .counter()
                        .count())
                .as("a replaced executor gets fresh meters")
                .isEqualTo(1);

        executors.remove("users");
        assertThat(meters.find("hedge.calls").tag("name", "users").counters()).isEmpty();
        assertThat(metrics.boundExecutors()).containsExactly("orders");

        metrics.close();
        assertThat(meters.find("hedge.calls").counters()).isEmpty();
        executors.executor("late");
        assertThat(meters.find("hedge.calls").tag("name", "late").counters()).isEmpty();
    }

    @Test
    void should_bind_an_executor_added_while_bind_to_runs() throws Exception {
        for (int trial = 0; trial < 500; trial++) {
            HedgedExecutorRegistry executors = HedgedExecutorRegistry.ofDefaults();
            for (int i = 0; i < 20; i++) {
                executors.executor("e" + i);
            }
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            HedgeRegistryMetrics metrics = HedgeRegistryMetrics.of(executors);
            java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
            Thread adder = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                executors.executor("late");
            });
            adder.start();
            start.await();
            metrics.bindTo(meters);
            adder.join();
            assertThat(metrics.boundExecutors()).as("trial %d", trial).contains("late");
            assertThat(meters.find("hedge.calls").tag("name", "late").counters())
                    .as("trial %d", trial)
                    .isNotEmpty();
        }
    }
}

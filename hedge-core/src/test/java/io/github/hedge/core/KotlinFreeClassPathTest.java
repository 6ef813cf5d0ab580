package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.core.registry.EntryAddedEvent;
import io.github.resilience4j.core.registry.EntryRemovedEvent;
import io.github.resilience4j.core.registry.EntryReplacedEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * hedge-core leaves resilience4j-core's Kotlin standard library off the class path. This test runs
 * on that class path (no Kotlin) and exercises every resilience4j class hedge-core uses: a {@code
 * ContextPropagator} carried into an attempt on another thread, and the registry's added,
 * replaced and removed events.
 */
class KotlinFreeClassPathTest {

    @Test
    void should_have_no_kotlin_on_the_class_path_when_resilience4j_core_is_a_dependency() {
        assertThatThrownBy(() -> Class.forName("kotlin.Unit")).isInstanceOf(ClassNotFoundException.class);
        assertThat(System.getProperty("java.class.path")).doesNotContain("kotlin");
    }

    @Test
    void should_carry_context_into_attempts_when_kotlin_is_absent() throws Exception {
        ThreadLocal<String> requestId = new ThreadLocal<>();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            HedgedExecutor ex = HedgedExecutor.of(
                    "kotlin-free",
                    HedgeConfig.builder()
                            .delay(DelayPolicy.never())
                            .attemptExecutor(pool)
                            .contextPropagators(List.of(ThreadLocalPropagator.of(requestId)))
                            .build());
            requestId.set("caller-1");
            CompletableFuture<String> seen = ex.executeAsync(ctx ->
                    CompletableFuture.completedFuture(Thread.currentThread().getName() + "/" + requestId.get()));
            requestId.remove();
            String result = seen.get(10, TimeUnit.SECONDS);
            assertThat(result).endsWith("/caller-1");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void should_announce_registry_changes_when_kotlin_is_absent() {
        HedgedExecutorRegistry registry = HedgedExecutorRegistry.ofDefaults();
        List<String> events = new ArrayList<>();
        registry.getEventPublisher()
                .onEntryAdded((EntryAddedEvent<HedgedExecutor> e) ->
                        events.add("added " + e.getAddedEntry().name()))
                .onEntryReplaced((EntryReplacedEvent<HedgedExecutor> e) ->
                        events.add("replaced " + e.getNewEntry().name()))
                .onEntryRemoved((EntryRemovedEvent<HedgedExecutor> e) ->
                        events.add("removed " + e.getRemovedEntry().name()));
        registry.executor("users");
        registry.replace("users", HedgedExecutor.of("users", HedgeConfig.ofDefaults()));
        registry.remove("users");
        assertThat(events).containsExactly("added users", "replaced users", "removed users");
    }
}

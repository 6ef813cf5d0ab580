package io.github.hedge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.core.registry.EntryAddedEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HedgedExecutorRegistryTest {

    @Test
    void should_return_same_executor_when_name_repeats() {
        HedgedExecutorRegistry registry = HedgedExecutorRegistry.ofDefaults();
        assertThat(registry.executor("a")).isSameAs(registry.executor("a"));
        assertThat(registry.getAllExecutors()).hasSize(1);
    }

    @Test
    void should_build_and_announce_when_named_configuration_is_used() {
        HedgeConfig reads = HedgeConfig.builder().maxAttempts(3).build();
        HedgedExecutorRegistry registry = HedgedExecutorRegistry.of(HedgeConfig.ofDefaults(), Map.of("reads", reads));
        List<String> added = new ArrayList<>();
        registry.getEventPublisher()
                .onEntryAdded((EntryAddedEvent<HedgedExecutor> e) ->
                        added.add(e.getAddedEntry().name()));
        HedgedExecutor users = registry.executor("users", "reads");
        assertThat(users.config().maxAttempts()).isEqualTo(3);
        assertThat(added).containsExactly("users");
        assertThatThrownBy(() -> registry.executor("x", "missing"))
                .hasMessageContaining("configuration 'missing' is not registered");
    }
}

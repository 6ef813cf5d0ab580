package io.github.hedge.core;

import io.github.resilience4j.core.registry.AbstractRegistry;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Named {@link HedgedExecutor}s, created on first use from a named or the default configuration,
 * in resilience4j's {@code Registry} style: the same name always returns the same executor, and
 * {@link #getEventPublisher()} announces additions, removals and replacements (a Micrometer binder
 * or an actuator endpoint follows them).
 *
 * <pre>{@code
 * HedgedExecutorRegistry registry = HedgedExecutorRegistry.of(HedgeConfig.builder().maxExtraLoad(0.05).build());
 * registry.addConfiguration("reads", HedgeConfig.builder().maxAttempts(3).idempotentByDefault(true).build());
 * HedgedExecutor users = registry.executor("users", "reads");
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class HedgedExecutorRegistry extends AbstractRegistry<HedgedExecutor, HedgeConfig> {

    /** Executors are created under this monitor, so {@link #withExecutors} sees no creation half done. */
    private final Object creation = new Object();

    private HedgedExecutorRegistry(HedgeConfig defaultConfig, Map<String, HedgeConfig> configs) {
        super(defaultConfig);
        configs.forEach(this::addConfiguration);
    }

    /** @return a registry whose default configuration is {@link HedgeConfig#ofDefaults()} */
    public static HedgedExecutorRegistry ofDefaults() {
        return of(HedgeConfig.ofDefaults());
    }

    /**
     * @param defaultConfig the configuration of executors created without one
     * @return a registry
     */
    public static HedgedExecutorRegistry of(HedgeConfig defaultConfig) {
        return of(defaultConfig, Map.of());
    }

    /**
     * @param defaultConfig the configuration of executors created without one
     * @param configs named configurations, referred to by {@link #executor(String, String)}
     * @return a registry
     */
    public static HedgedExecutorRegistry of(HedgeConfig defaultConfig, Map<String, HedgeConfig> configs) {
        Objects.requireNonNull(defaultConfig, "defaultConfig must not be null");
        Objects.requireNonNull(configs, "configs must not be null");
        return new HedgedExecutorRegistry(defaultConfig, configs);
    }

    /**
     * @param name the executor's name
     * @return the executor of that name, created with the default configuration if absent
     */
    public HedgedExecutor executor(String name) {
        return executor(name, getDefaultConfig());
    }

    /**
     * @param name the executor's name
     * @param config used only if the executor does not exist yet
     * @return the executor of that name
     */
    public HedgedExecutor executor(String name, HedgeConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        Optional<HedgedExecutor> existing = find(name);
        if (existing.isPresent()) {
            return existing.get(); // lookups of existing executors take no lock
        }
        synchronized (creation) {
            return computeIfAbsent(name, () -> HedgedExecutor.of(name, config));
        }
    }

    /**
     * Runs {@code action} with the executors present now, while no executor can be created. Use it
     * to subscribe to {@link #getEventPublisher()} and read the registry as one step: resilience4j
     * announces a new entry before the registry shows it, so a subscriber that reads the registry
     * outside this method can miss an executor created at the same moment. {@code action} must not
     * create executors of this registry from another thread and wait for them.
     *
     * @param action receives every executor present; runs on the calling thread
     */
    public void withExecutors(Consumer<Set<HedgedExecutor>> action) {
        Objects.requireNonNull(action, "action must not be null");
        synchronized (creation) {
            action.accept(getAllExecutors());
        }
    }

    /**
     * @param name the executor's name
     * @param configName a configuration added with {@link #addConfiguration(String, Object)}
     * @return the executor of that name
     * @throws IllegalArgumentException if no configuration has that name
     */
    public HedgedExecutor executor(String name, String configName) {
        HedgeConfig config = getConfiguration(configName)
                .orElseThrow(() -> new IllegalArgumentException(
                        "configuration '" + configName + "' is not registered; known: " + configurations.keySet()));
        return executor(name, config);
    }

    /** @return every executor, by name */
    public Set<HedgedExecutor> getAllExecutors() {
        return entryMap.values().stream().collect(Collectors.toUnmodifiableSet());
    }
}

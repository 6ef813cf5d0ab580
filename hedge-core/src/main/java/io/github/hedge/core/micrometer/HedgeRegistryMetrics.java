package io.github.hedge.core.micrometer;

import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.core.internal.Checks;
import io.github.resilience4j.core.registry.EntryAddedEvent;
import io.github.resilience4j.core.registry.EntryRemovedEvent;
import io.github.resilience4j.core.registry.EntryReplacedEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * {@link HedgeMetrics} for every executor of a {@link HedgedExecutorRegistry}, following the
 * registry: an executor added later gets its meters, a removed one loses them, a replaced one is
 * re-bound (as resilience4j's tagged metrics follow their registries). A Spring Boot application
 * binds one of these instead of one {@code HedgeMetrics} per executor.
 *
 * <pre>{@code
 * HedgeRegistryMetrics.of(registry).bindTo(meterRegistry);
 * }</pre>
 *
 * <p>Meter names and tags are those of {@link HedgeMetrics}, one {@code name} tag value per
 * executor. Thread-safe. The registry's event publisher cannot unsubscribe, so after
 * {@link #close()} its events are ignored.
 */
public final class HedgeRegistryMetrics implements MeterBinder, AutoCloseable {
    private final HedgedExecutorRegistry registry;
    private final Function<HedgedExecutor, HedgeMetrics> factory;
    private final List<MeterRegistry> meterRegistries = new ArrayList<>(); // guarded by this
    private final Map<String, HedgeMetrics> byName = new HashMap<>(); // guarded by this
    private boolean subscribed; // guarded by this
    private boolean closed; // guarded by this

    private HedgeRegistryMetrics(HedgedExecutorRegistry registry, Function<HedgedExecutor, HedgeMetrics> factory) {
        this.registry = registry;
        this.factory = factory;
    }

    /**
     * @param registry the executors to follow
     * @return an unbound binder, building each executor's meters with {@link HedgeMetrics#of}
     */
    public static HedgeRegistryMetrics of(HedgedExecutorRegistry registry) {
        return of(registry, HedgeMetrics::of);
    }

    /**
     * @param registry the executors to follow
     * @param factory builds one executor's binder (a prefix, common tags, histograms...)
     * @return an unbound binder
     */
    public static HedgeRegistryMetrics of(
            HedgedExecutorRegistry registry, Function<HedgedExecutor, HedgeMetrics> factory) {
        return new HedgeRegistryMetrics(Checks.notNull("registry", registry), Checks.notNull("factory", factory));
    }

    /**
     * Binds every executor of the registry, now and as the registry changes, to {@code meterRegistry}.
     *
     * @param meterRegistry where the meters go; binding to several is allowed
     */
    @Override
    public void bindTo(MeterRegistry meterRegistry) {
        Checks.notNull("meterRegistry", meterRegistry);
        // subscribe and read as one step while no executor can be created: an executor created
        // before is in the snapshot, one created after is announced to the subscription
        registry.withExecutors(executors -> {
            subscribeOnce();
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("HedgeRegistryMetrics is closed");
                }
                if (meterRegistries.contains(meterRegistry)) {
                    return;
                }
                meterRegistries.add(meterRegistry);
                for (HedgedExecutor e : executors) {
                    metricsFor(e).bindTo(meterRegistry);
                }
            }
        });
    }

    private void subscribeOnce() {
        synchronized (this) {
            if (subscribed) {
                return;
            }
            subscribed = true;
        }
        registry.getEventPublisher().onEntryAdded((EntryAddedEvent<HedgedExecutor> ev) -> added(ev.getAddedEntry()));
        registry.getEventPublisher()
                .onEntryRemoved((EntryRemovedEvent<HedgedExecutor> ev) -> removed(ev.getRemovedEntry()));
        registry.getEventPublisher().onEntryReplaced((EntryReplacedEvent<HedgedExecutor> ev) -> {
            removed(ev.getOldEntry());
            added(ev.getNewEntry());
        });
    }

    private HedgeMetrics metricsFor(HedgedExecutor e) {
        return byName.computeIfAbsent(e.name(), n -> factory.apply(e));
    }

    private synchronized void added(HedgedExecutor e) {
        if (closed) {
            return;
        }
        HedgeMetrics m = metricsFor(e);
        for (MeterRegistry r : meterRegistries) {
            m.bindTo(r);
        }
    }

    private synchronized void removed(HedgedExecutor e) {
        HedgeMetrics m = byName.remove(e.name());
        if (m != null) {
            m.close();
        }
    }

    /** @return the names of the executors whose meters are bound now */
    public synchronized List<String> boundExecutors() {
        return List.copyOf(byName.keySet());
    }

    /** Removes every meter this binder registered and stops following the registry. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        byName.values().forEach(HedgeMetrics::close);
        byName.clear();
    }
}

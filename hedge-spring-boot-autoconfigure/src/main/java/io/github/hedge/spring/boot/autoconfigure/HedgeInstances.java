package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.core.HedgeConfig;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.HedgedExecutorRegistry;
import io.github.hedge.core.event.Subscription;
import io.github.hedge.core.slowlog.SlowCallLog;
import io.github.hedge.spring.boot.autoconfigure.SettingsResolver.Resolved;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The named executors configured by {@code hedge.*}: builds every listed instance when the
 * application starts (so an invalid value fails the start), creates unlisted ones from {@code
 * hedge.defaults} on first use, and reconfigures an instance at runtime without a restart.
 *
 * <h2>Runtime changes</h2>
 *
 * {@link #update(String, Consumer)} (the {@code hedges} actuator endpoint's write operation) and
 * {@link #refresh()} (re-reads {@code hedge.*} from the {@code Environment}, e.g. after Spring
 * Cloud's {@code EnvironmentChangeEvent}) build a new {@link HedgedExecutor} for each instance whose
 * effective settings changed and {@linkplain HedgedExecutorRegistry#replace replace} it in the
 * registry: calls already running finish on the old executor, new calls use the new one. The new
 * executor keeps the old one's latency tracker (so an adaptive delay stays warm) and, if {@code
 * max-extra-load} did not change, its budget; its counters ({@link HedgedExecutor#stats()}) and
 * meters start from zero. Invalid values are rejected with {@link InvalidHedgePropertyException}
 * and change nothing.
 *
 * <h2>Executors of adapters</h2>
 *
 * The registry also holds executors that adapters create in it, such as the gRPC interceptor's
 * per-method executors ({@code grpc:shop.Catalog/GetItem}): {@link #names()} lists them and the
 * registry's meters follow them, but they are configured by their adapter's properties, so {@link
 * #settings(String)} has none for them and {@link #update} and {@link #refresh()} leave them alone.
 * The wrapped Cassandra session's executor is an instance of these ({@code hedge.cassandra.instance}).
 *
 * <p>An instance whose settings an adapter copies once, at start, into executors of its own ({@code
 * hedge.grpc.instance}, the defaults of every gRPC method; {@code hedge.cassandra.instance} in the
 * driver-policy mode) is a {@linkplain #markTemplate template}: it has no executor of its own, so
 * the endpoint does not show an executor that no call uses, nor accept a change that would not
 * reach the adapter.
 *
 * <p>Thread-safe: lookups are lock-free, changes are serialised.
 */
public class HedgeInstances implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HedgeInstances.class);

    private final HedgedExecutorRegistry registry;
    private final List<HedgeConfigCustomizer> customizers;
    private final Executor attemptExecutor;
    private final Supplier<HedgeProperties> rebinder;

    private volatile HedgeProperties properties;
    private final Map<String, HedgeInstanceSettings> settings = new ConcurrentHashMap<>();
    private final Map<String, Subscription> slowLogs = new ConcurrentHashMap<>();
    private final Map<String, Template> templates = new ConcurrentHashMap<>();

    /** An instance an adapter copied at start, and the settings it copied. */
    private record Template(String usedBy, HedgeInstanceSettings settings) {}

    /**
     * Builds every instance listed in {@code properties}.
     *
     * @param properties the bound {@code hedge.*} properties
     * @param registry where the executors live (created on demand for unlisted names)
     * @param customizers applied to every instance's configuration, in order
     * @param attemptExecutor runs the attempts of blocking calls, or null for the core's default (a
     *     virtual thread per attempt on JDK 21+, else a shared cached pool)
     * @param rebinder binds {@code hedge.*} afresh from the environment, for {@link #refresh()}; may
     *     be null (then {@code refresh()} is unsupported)
     * @throws InvalidHedgePropertyException if a value is out of range
     */
    public HedgeInstances(
            HedgeProperties properties,
            HedgedExecutorRegistry registry,
            List<HedgeConfigCustomizer> customizers,
            Executor attemptExecutor,
            Supplier<HedgeProperties> rebinder) {
        // a copy: Spring Cloud rebinds the HedgeProperties bean in place on refresh, also with values
        // refresh() refuses, and unlisted instances are built from what is kept here
        this.properties = copy(Objects.requireNonNull(properties, "properties must not be null"));
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
        this.customizers = List.copyOf(customizers);
        this.attemptExecutor = attemptExecutor;
        this.rebinder = rebinder;
        Map<String, Resolved> all = resolveAll(this.properties);
        all.forEach((name, r) -> install(name, r, registry.find(name).orElse(null)));
    }

    /**
     * Returns the executor of an instance, creating an unlisted one from {@code hedge.defaults}.
     *
     * @param name the instance name, as in {@code @Hedged("user-reads")}
     * @return its executor
     */
    public HedgedExecutor executor(String name) {
        Optional<HedgedExecutor> found = registry.find(name);
        return found.isPresent() ? found.get() : createUnlisted(name);
    }

    private synchronized HedgedExecutor createUnlisted(String name) {
        Optional<HedgedExecutor> found = registry.find(name);
        if (found.isPresent()) {
            return found.get();
        }
        HedgeProperties.Instance listed = properties.getInstances().get(name); // a template's
        if (listed == null) {
            log.info(
                    "hedge instance '{}' is not listed under hedge.instances; it uses hedge.defaults"
                            + " (check the name if that is not intended)",
                    name);
        }
        return install(name, SettingsResolver.resolve(name, properties.getDefaults(), listed), null);
    }

    /**
     * @return the names of every instance: listed ones first (but not {@linkplain #markTemplate
     *     templates}), then those created on use and the executors of adapters
     */
    public Set<String> names() {
        Set<String> names = new LinkedHashSet<>();
        for (String listed : properties.getInstances().keySet()) {
            if (!isTemplate(listed)) {
                names.add(listed);
            }
        }
        registry.getAllExecutors().stream().map(HedgedExecutor::name).sorted().forEach(names::add);
        return Collections.unmodifiableSet(names);
    }

    /**
     * Marks an instance as the template of an adapter that copies its settings, once, into
     * executors of its own ({@code hedge.grpc.instance}: the defaults of the gRPC interceptor's
     * per-method executors). Its executor, built at start because the instance is listed, is
     * removed from the registry; {@link #names()} leaves the instance out, {@link #update} refuses
     * it and {@link #refresh()} does not apply it (a change would not reach the adapter before a
     * restart; refresh logs that at WARN). If a {@code @Hedged} method names the instance after all,
     * it gets an executor from the instance's settings and is an ordinary instance from then on.
     *
     * @param name the instance
     * @param usedBy the adapter's properties, for messages (e.g. {@code hedge.grpc})
     */
    public synchronized void markTemplate(String name, String usedBy) {
        Objects.requireNonNull(usedBy, "usedBy must not be null");
        HedgeInstanceSettings copied = settings.remove(name);
        if (copied == null) {
            copied = SettingsResolver.resolve(
                            name,
                            properties.getDefaults(),
                            properties.getInstances().get(name))
                    .settings();
        }
        templates.put(name, new Template(usedBy, copied));
        Subscription slowLog = slowLogs.remove(name);
        if (slowLog != null) {
            slowLog.close();
        }
        registry.remove(name);
    }

    /** @return whether the instance is a template without an executor of its own */
    private boolean isTemplate(String name) {
        return templates.containsKey(name) && !settings.containsKey(name);
    }

    /**
     * @param name an instance name
     * @return its effective settings, if the instance exists
     */
    public Optional<HedgeInstanceSettings> settings(String name) {
        return Optional.ofNullable(settings.get(name));
    }

    /** @return the registry holding the executors */
    public HedgedExecutorRegistry registry() {
        return registry;
    }

    /**
     * Changes an instance's own settings at runtime and, if its effective settings changed, replaces
     * its executor (see the class comment). An unlisted instance becomes listed.
     *
     * @param name the instance
     * @param change sets values on a copy of the instance's {@code hedge.instances.<name>} block
     * @return the new effective settings
     * @throws InvalidHedgePropertyException if a value is out of range; nothing changes then
     * @throws IllegalArgumentException if the registry's executor of that name was created by an
     *     adapter, not by these instances (see the class comment); nothing changes then
     */
    public synchronized HedgeInstanceSettings update(String name, Consumer<HedgeProperties.Instance> change) {
        if (isForeign(name)) {
            throw new IllegalArgumentException("hedge executor '" + name + "' was created by an adapter, not from"
                    + " hedge.instances; change it through that adapter's properties (e.g. hedge.grpc.methods)");
        }
        if (isTemplate(name)) {
            throw new IllegalArgumentException("hedge instance '" + name + "' is read by "
                    + templates.get(name).usedBy() + " when the application starts; change hedge.instances." + name
                    + " and restart");
        }
        HedgeProperties next = copy(properties);
        HedgeProperties.Instance instance =
                next.getInstances().computeIfAbsent(name, n -> new HedgeProperties.Instance());
        change.accept(instance);
        Resolved r = SettingsResolver.resolve(name, next.getDefaults(), instance);
        properties = next;
        apply(name, r);
        return r.settings();
    }

    /**
     * Re-reads {@code hedge.*} from the environment and applies it: instances whose effective
     * settings changed get a new executor. Values set through {@link #update} are replaced by the
     * environment's. Instances removed from the properties keep running with {@code hedge.defaults}.
     *
     * @throws InvalidHedgePropertyException if a value is out of range; nothing changes then
     * @throws IllegalStateException if this instance was built without an environment
     */
    public synchronized void refresh() {
        if (rebinder == null) {
            throw new IllegalStateException("HedgeInstances was built without an environment to refresh from");
        }
        HedgeProperties next = rebinder.get();
        Map<String, Resolved> all = resolveAll(next); // validate everything before changing anything
        for (String existing : List.copyOf(settings.keySet())) {
            if (!all.containsKey(existing)) {
                all.put(existing, SettingsResolver.resolve(existing, next.getDefaults(), null));
            }
        }
        properties = next;
        all.forEach((name, r) -> {
            if (isTemplate(name)) {
                if (!r.settings().equals(templates.get(name).settings())) {
                    log.warn(
                            "hedge.instances.{} changed, but {} reads it when the application starts: restart to apply",
                            name,
                            templates.get(name).usedBy());
                }
            } else if (isForeign(name)) {
                log.warn(
                        "hedge.instances.{} is not applied: the executor of that name was created by an adapter"
                                + " (e.g. hedge.grpc), which configures it",
                        name);
            } else {
                apply(name, r);
            }
        });
    }

    /** @return whether the registry's executor of that name was not built here (an adapter's) */
    private boolean isForeign(String name) {
        return !settings.containsKey(name) && registry.find(name).isPresent();
    }

    private void apply(String name, Resolved r) {
        Optional<HedgedExecutor> old = registry.find(name);
        if (old.isPresent() && r.settings().equals(settings.get(name))) {
            return;
        }
        install(name, r, old.orElse(null));
        log.info("hedge instance '{}' reconfigured: {}", name, r.settings());
    }

    private HedgedExecutor install(String name, Resolved r, HedgedExecutor old) {
        HedgeConfig.Builder b = SettingsResolver.toBuilder(name, r);
        if (attemptExecutor != null) {
            b.attemptExecutor(attemptExecutor);
        }
        if (old != null) {
            b.latencyTracker(old.latencyTracker());
            if (old.config().budgetRatio() == r.settings().maxExtraLoad()) {
                b.budget(old.budget());
            }
        }
        for (HedgeConfigCustomizer c : customizers) {
            c.customize(name, b);
        }
        HedgeConfig config = b.build();
        HedgedExecutor executor;
        if (old == null) {
            executor = registry.executor(name, config);
        } else {
            executor = HedgedExecutor.of(name, config);
            registry.replace(name, executor);
        }
        settings.put(name, r.settings());
        Subscription previous = slowLogs.remove(name);
        if (previous != null) {
            previous.close();
        }
        if (r.settings().slowCallThreshold() != null) {
            SlowCallLog slowLog = SlowCallLog.builder()
                    .threshold(r.settings().slowCallThreshold())
                    .build();
            slowLogs.put(name, slowLog.attach(executor.events()));
        }
        return executor;
    }

    private static Map<String, Resolved> resolveAll(HedgeProperties p) {
        Map<String, Resolved> all = new LinkedHashMap<>();
        // the defaults block is checked even when no instance is listed
        SettingsResolver.resolve("(defaults)", p.getDefaults(), null);
        p.getInstances().forEach((name, i) -> all.put(name, SettingsResolver.resolve(name, p.getDefaults(), i)));
        return all;
    }

    /** Stops the slow-call logs. The executors need no closing: they hold no thread. */
    @Override
    public void close() {
        new ArrayList<>(slowLogs.values()).forEach(Subscription::close);
        slowLogs.clear();
    }

    private static HedgeProperties copy(HedgeProperties p) {
        HedgeProperties c = new HedgeProperties();
        HedgeProperties.Defaults d = p.getDefaults();
        HedgeProperties.Defaults cd = c.getDefaults();
        copyDelay(d.getDelay(), cd.getDelay());
        cd.setMaxAttempts(d.getMaxAttempts());
        cd.setMaxExtraLoad(d.getMaxExtraLoad());
        cd.setMinDelay(d.getMinDelay());
        cd.setMaxDelay(d.getMaxDelay());
        cd.setTimeout(d.getTimeout());
        cd.setIdempotent(d.getIdempotent());
        cd.setSlowCallThreshold(d.getSlowCallThreshold());
        cd.setSavingsWindow(d.getSavingsWindow());
        cd.setLoserSampling(d.getLoserSampling());
        p.getInstances().forEach((name, i) -> {
            HedgeProperties.Instance ci = new HedgeProperties.Instance();
            copyDelay(i.getDelay(), ci.getDelay());
            ci.setMaxAttempts(i.getMaxAttempts());
            ci.setMaxExtraLoad(i.getMaxExtraLoad());
            ci.setMinDelay(i.getMinDelay());
            ci.setMaxDelay(i.getMaxDelay());
            ci.setTimeout(i.getTimeout());
            ci.setIdempotent(i.getIdempotent());
            ci.setSlowCallThreshold(i.getSlowCallThreshold());
            ci.setSavingsWindow(i.getSavingsWindow());
            ci.setLoserSampling(i.getLoserSampling());
            c.getInstances().put(name, ci);
        });
        c.getAspect().setOrder(p.getAspect().getOrder());
        return c;
    }

    private static void copyDelay(HedgeProperties.Delay from, HedgeProperties.Delay to) {
        to.setPercentile(from.getPercentile());
        to.setFixed(from.getFixed());
        to.getIncreasing().setInitial(from.getIncreasing().getInitial());
        to.getIncreasing().setStep(from.getIncreasing().getStep());
        to.getIncreasing().setMax(from.getIncreasing().getMax());
    }
}

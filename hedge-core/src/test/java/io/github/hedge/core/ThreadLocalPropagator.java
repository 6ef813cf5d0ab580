package io.github.hedge.core;

import io.github.resilience4j.core.ContextPropagator;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Tests' context propagator: carries one thread-local's value to the threads attempts run on. */
final class ThreadLocalPropagator {
    private ThreadLocalPropagator() {}

    /** @return a propagator that retrieves {@code local} on the caller, sets it around a task and removes it after */
    static ContextPropagator<String> of(ThreadLocal<String> local) {
        return new ContextPropagator<>() {
            @Override
            public Supplier<Optional<String>> retrieve() {
                return () -> Optional.ofNullable(local.get());
            }

            @Override
            public Consumer<Optional<String>> copy() {
                return v -> v.ifPresent(local::set);
            }

            @Override
            public Consumer<Optional<String>> clear() {
                return v -> local.remove();
            }
        };
    }
}

package io.github.hedge.spring.aop;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.reactor.HedgedMono;
import reactor.core.publisher.Mono;

/**
 * Runs a {@code @Hedged} method that returns a {@code Mono} (or a Kotlin {@code suspend} function,
 * which Spring's AOP bridge turns into one) through hedge-reactor. Loaded only when hedge-reactor is
 * on the class path. Stateless, thread-safe.
 */
final class ReactiveCalls {
    private ReactiveCalls() {}

    /**
     * @param executor the instance's executor
     * @param options the call's options
     * @param attempt proceeds the method once; returns its {@code Mono} (Spring's bridge returns one
     *     for a suspend function)
     * @return a {@code Mono} each subscription to which is one hedged call, each attempt invoking the
     *     method anew
     */
    static Object mono(HedgedExecutor executor, CallOptions options, HedgedInterceptor.Attempt attempt) {
        return HedgedMono.of(executor, options, ctx -> {
            Object result;
            try {
                result = attempt.proceed();
            } catch (Exception e) {
                return Mono.error(e);
            }
            if (result == null) {
                return Mono.error(new NullPointerException("a @Hedged method returned null instead of a Mono"));
            }
            if (result instanceof Mono<?> mono) {
                return mono;
            }
            // a suspend function whose Kotlin result is a Flow reaches here as a Flux: a stream, not one answer
            return Mono.error(new IllegalStateException("a @Hedged method returned a "
                    + result.getClass().getName() + " instead of a Mono; hedge hedges calls that have one answer"));
        });
    }
}

package io.github.hedge.spring.aop;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.framework.ReflectiveMethodInvocation;
import org.springframework.aop.interceptor.ExposeInvocationInterceptor;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Runs a call of a {@link Hedged} method through the named instance's {@link HedgedExecutor}: a
 * {@code CompletionStage}/{@code CompletableFuture} method through the async form, a method
 * returning reactor's {@code Mono} and a Kotlin {@code suspend} function through hedge-reactor's
 * {@code HedgedMono} (each subscription one call, each attempt invoking the method anew when it
 * starts), any other through the blocking form (see {@link Hedged}). Applied by {@link
 * HedgedAdvisor}.
 *
 * <p>Each attempt proceeds on its own clone of the method invocation, so the advice ordered inside
 * this one (see {@link HedgedAdvisor}) runs once per attempt. Attempts run on other threads than
 * the caller's, where Spring AOP finds no current invocation: advice that binds its annotation as
 * an argument (resilience4j's aspects, for one) would fail with "JoinPointMatch was NOT bound". So
 * each attempt's clone is exposed as the current invocation on its thread, and holds its own copy
 * of the invocation's attributes, where Spring keeps those bindings: clones of one invocation
 * otherwise share one unsynchronised map across the attempts' threads.
 *
 * <p>Thread-safe.
 */
public class HedgedInterceptor implements MethodInterceptor {
    /** ReflectiveMethodInvocation's attribute map; null if a Spring version renamed it (clones then share it). */
    private static final Field USER_ATTRIBUTES = userAttributesField();

    private final Supplier<HedgeInstances> instancesSupplier;
    private volatile HedgeInstances instances;
    private final ConcurrentMap<MethodClassKey, Plan> plans = new ConcurrentHashMap<>();

    /** @param instances supplies the named executors; asked once, on the first call */
    public HedgedInterceptor(Supplier<HedgeInstances> instances) {
        this.instancesSupplier = Objects.requireNonNull(instances, "instances must not be null");
    }

    private HedgeInstances instances() {
        HedgeInstances i = instances;
        if (i == null) {
            i = Objects.requireNonNull(instancesSupplier.get(), "no HedgeInstances");
            instances = i;
        }
        return i;
    }

    /**
     * Runs one call of an annotated method through its instance.
     *
     * @param invocation the call
     * @return the method's result, from the first attempt that succeeded
     * @throws Throwable what the method threw (the primary attempt's exception when every attempt failed)
     */
    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        if (!(invocation instanceof ProxyMethodInvocation call)) {
            return invocation.proceed(); // cannot be repeated: not a Spring proxy's invocation
        }
        Method method = call.getMethod();
        Class<?> targetClass = call.getThis() != null ? AopUtils.getTargetClass(call.getThis()) : null;
        Plan plan = plans.computeIfAbsent(new MethodClassKey(method, targetClass), k -> plan(method, targetClass));
        if (plan == null) {
            return call.proceed();
        }
        HedgedExecutor executor = instances().executor(plan.instance);
        Attempt attempt = attempt(call);
        if (plan.springAsync) {
            // @Async outside: the body blocks and returns a completed future, so hedge it as a blocking
            // call; @Async's own interceptor hands the value to its caller
            Object value = executor.execute(plan.options, () -> awaitResult(attempt.proceed()));
            return plan.async || java.util.concurrent.Future.class.isAssignableFrom(method.getReturnType())
                    ? CompletableFuture.completedFuture(value)
                    : value;
        }
        if (plan.reactive) {
            return ReactiveCalls.mono(executor, plan.options, attempt);
        }
        if (plan.async) {
            return executor.executeAsync(plan.options, ctx -> stage(attempt.proceed()));
        }
        return executor.execute(plan.options, attempt::proceed);
    }

    /** Runs the rest of the advice chain and the method once; called once per attempt, on any thread. */
    @FunctionalInterface
    interface Attempt {
        Object proceed() throws Exception;
    }

    private static Attempt attempt(ProxyMethodInvocation call) {
        Map<String, Object> attributes;
        if (call instanceof ReflectiveMethodInvocation rmi) {
            // also creates the shared map now, on the caller's thread, not racily in invocableClone()
            attributes = new HashMap<>(rmi.getUserAttributes());
        } else {
            attributes = null;
        }
        return () -> {
            MethodInvocation clone = call.invocableClone();
            if (attributes != null && USER_ATTRIBUTES != null && clone instanceof ReflectiveMethodInvocation) {
                ReflectionUtils.setField(USER_ATTRIBUTES, clone, new HashMap<>(attributes));
            }
            try {
                return ExposeInvocationInterceptor.INSTANCE.invoke(clone);
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        };
    }

    /** The value of an {@code @Async} method's (completed) future, its failure thrown unwrapped. */
    private static Object awaitResult(Object result) throws Exception {
        if (!(result instanceof java.util.concurrent.Future<?> future)) {
            return result;
        }
        try {
            return future.get();
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        }
    }

    private static CompletionStage<Object> stage(Object result) {
        if (result == null) {
            throw new NullPointerException("a @Hedged method returned null instead of a CompletionStage");
        }
        @SuppressWarnings("unchecked")
        CompletionStage<Object> stage = (CompletionStage<Object>) result;
        return stage;
    }

    private static Plan plan(Method method, Class<?> targetClass) {
        Hedged hedged = HedgedMethods.find(method, targetClass);
        if (hedged == null) {
            return null;
        }
        String problem = HedgedMethods.problem(method, targetClass, hedged);
        if (problem != null) {
            // HedgedMethodsValidator fails the start for this; a bean it did not see gets here
            throw new IllegalStateException("@Hedged cannot hedge " + method + ": " + problem);
        }
        Class<?> rt = method.getReturnType();
        boolean async = HedgedMethods.isAsync(rt);
        boolean springAsync = HedgedMethods.isSpringAsync(method, targetClass);
        CallOptions.Builder options = CallOptions.builder()
                .operation(ClassUtils.getShortName(targetClass != null ? targetClass : method.getDeclaringClass()) + "."
                        + method.getName());
        switch (hedged.idempotent()) {
            case IDEMPOTENT:
                options.idempotent(true);
                break;
            case NOT_IDEMPOTENT:
                options.idempotent(false);
                break;
            default:
                break;
        }
        return new Plan(hedged.value(), async, HedgedMethods.isReactive(method), springAsync, options.build());
    }

    private static Field userAttributesField() {
        try {
            Field f = ReflectionUtils.findField(ReflectiveMethodInvocation.class, "userAttributes", Map.class);
            if (f != null) {
                ReflectionUtils.makeAccessible(f);
            }
            return f;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private record Plan(String instance, boolean async, boolean reactive, boolean springAsync, CallOptions options) {}
}

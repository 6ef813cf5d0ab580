package io.github.hedge.spring.aop;

import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import java.lang.reflect.Method;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.Pointcut;
import org.aspectj.lang.reflect.MethodSignature;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Runs methods annotated with {@link Hedged} (or declared in a type annotated with it) through the
 * named instance's {@link HedgedExecutor}; see {@link Hedged} for the two forms.
 *
 * <p><b>Order.</b> Advice with a lower {@link #getOrder() order} runs outside. The default, {@code
 * Ordered.LOWEST_PRECEDENCE - 3} ({@code hedge.aspect.order}), puts hedging inside resilience4j's
 * {@code @Retry} ({@code LOWEST_PRECEDENCE - 5} in resilience4j 2.x) and {@code @CircuitBreaker}
 * ({@code - 4}): a retry repeats a whole hedged call, and the circuit breaker counts one outcome per
 * call, not the losers hedging cancels. {@code @TimeLimiter} ({@code - 2}) and {@code @Bulkhead}
 * ({@code - 1}) run inside, once per attempt. It ties with {@code @RateLimiter} ({@code - 3}): with
 * both on one method, set the orders explicitly.
 *
 * <p>Thread-safe. Each attempt proceeds on a clone of the method invocation, so the advice inside
 * this one runs once per attempt.
 */
@Aspect
public class HedgedAspect implements Ordered {
    /** The default order: inside resilience4j's retry and circuit breaker aspects. */
    public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 3;

    private final HedgeInstances instances;
    private final int order;
    private final ConcurrentMap<MethodClassKey, Plan> plans = new ConcurrentHashMap<>();

    /**
     * @param instances the named executors
     * @param order this aspect's order among the advice of a method
     */
    public HedgedAspect(HedgeInstances instances, int order) {
        this.instances = Objects.requireNonNull(instances, "instances must not be null");
        this.order = order;
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Pointcut("@annotation(io.github.hedge.spring.annotation.Hedged)")
    void annotatedMethod() {}

    @Pointcut("@within(io.github.hedge.spring.annotation.Hedged) && execution(public * *(..))")
    void publicMethodOfAnnotatedType() {}

    /**
     * Runs one call of an annotated method through its instance.
     *
     * @param pjp the invocation
     * @return the method's result, from the first attempt that succeeded
     * @throws Throwable what the method threw (the primary attempt's exception when every attempt failed)
     */
    @Around("annotatedMethod() || publicMethodOfAnnotatedType()")
    public Object around(ProceedingJoinPoint pjp) throws Throwable {
        Method method = ((MethodSignature) pjp.getSignature()).getMethod();
        Class<?> targetClass = pjp.getTarget() != null ? AopUtils.getTargetClass(pjp.getTarget()) : null;
        Plan plan = plans.computeIfAbsent(new MethodClassKey(method, targetClass), k -> plan(method, targetClass));
        if (plan == null) {
            return pjp.proceed();
        }
        HedgedExecutor executor = instances.executor(plan.instance);
        if (plan.async) {
            return executor.executeAsync(plan.options, ctx -> stage(proceed(pjp)));
        }
        return executor.execute(plan.options, () -> proceed(pjp));
    }

    private static CompletionStage<Object> stage(Object result) {
        if (result == null) {
            throw new NullPointerException("a @Hedged method returned null instead of a CompletionStage");
        }
        @SuppressWarnings("unchecked")
        CompletionStage<Object> stage = (CompletionStage<Object>) result;
        return stage;
    }

    private static Object proceed(ProceedingJoinPoint pjp) throws Exception {
        try {
            return pjp.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static Plan plan(Method method, Class<?> targetClass) {
        Method specific = targetClass != null ? AopUtils.getMostSpecificMethod(method, targetClass) : method;
        Hedged hedged = AnnotatedElementUtils.findMergedAnnotation(specific, Hedged.class);
        if (hedged == null && targetClass != null) {
            hedged = AnnotatedElementUtils.findMergedAnnotation(targetClass, Hedged.class);
        }
        if (hedged == null) {
            hedged = AnnotatedElementUtils.findMergedAnnotation(method.getDeclaringClass(), Hedged.class);
        }
        if (hedged == null) {
            return null;
        }
        Class<?> rt = method.getReturnType();
        boolean async = CompletionStage.class.isAssignableFrom(rt) && rt.isAssignableFrom(CompletableFuture.class);
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
        return new Plan(hedged.value(), async, options.build());
    }

    private record Plan(String instance, boolean async, CallOptions options) {}
}

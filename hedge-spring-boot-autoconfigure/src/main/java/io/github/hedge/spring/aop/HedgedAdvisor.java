package io.github.hedge.spring.aop;

import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.boot.autoconfigure.HedgeInstances;
import java.lang.reflect.Method;
import java.util.function.Supplier;
import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * The Spring AOP advisor behind {@link Hedged}: methods annotated with it, and every public method
 * of types annotated with it, run through {@link HedgedInterceptor}. The annotation is found as
 * Spring finds {@code @Transactional}: on the method or on a method it overrides or implements (an
 * interface's, a superclass's), then on its type, also as a meta-annotation, with JDK and CGLIB
 * proxies alike. An infrastructure advisor like
 * {@code @Transactional}'s, so it needs no AspectJ: Spring Boot's {@code AopAutoConfiguration}
 * ({@code spring.aop.auto=true}, the default) proxies the beans, with or without AspectJ.
 *
 * <h2>Order</h2>
 *
 * Advice with a lower {@link #getOrder() order} runs outside. The default, {@link #DEFAULT_ORDER}
 * ({@code Ordered.LOWEST_PRECEDENCE - 3}, property {@code hedge.aspect.order}), puts hedging inside
 * resilience4j's {@code @Retry} ({@code LOWEST_PRECEDENCE - 5} in resilience4j 2.x) and {@code
 * @CircuitBreaker} ({@code - 4}): a retry repeats a whole hedged call, and the circuit breaker counts
 * one outcome per call, not the losers hedging cancels. {@code @TimeLimiter} ({@code - 2}) and
 * {@code @Bulkhead} ({@code - 1}) run inside, once per attempt. It ties with {@code @RateLimiter}
 * ({@code - 3}): with both on one method, set the orders explicitly.
 *
 * <p>Thread-safe.
 */
public class HedgedAdvisor extends AbstractPointcutAdvisor {
    private static final long serialVersionUID = 1L;

    /** The default order: inside resilience4j's retry and circuit breaker aspects. */
    public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 3;

    private final transient HedgedInterceptor interceptor;
    private final transient Pointcut pointcut;

    /**
     * @param instances supplies the named executors; asked on the first call of a {@code @Hedged}
     *     method, so the advisor can be created before them
     * @param order this advisor's order among the advice of a method
     */
    public HedgedAdvisor(Supplier<HedgeInstances> instances, int order) {
        this.interceptor = new HedgedInterceptor(instances);
        this.pointcut = new HedgedPointcut();
        setOrder(order);
    }

    /** Matches the methods to which a {@link Hedged} applies (see {@link HedgedMethods#find}). */
    private static final class HedgedPointcut extends StaticMethodMatcherPointcut {
        HedgedPointcut() {
            setClassFilter(type -> AnnotationUtils.isCandidateClass(type, Hedged.class));
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return HedgedMethods.find(method, targetClass) != null;
        }
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }
}

package io.github.hedge.spring.aop;

import io.github.hedge.spring.annotation.Hedged;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.util.ClassUtils;

/**
 * Fails the creation of a bean that has a {@link Hedged} method its proxy cannot intercept, instead
 * of letting its calls run unhedged without a word: a {@code static} or {@code private} method (no
 * Spring proxy intercepts those), a {@code final} method under a class-based (CGLIB) proxy (the
 * call would run on the proxy instance itself, whose fields are not set), and a bean that was not
 * proxied with the {@link HedgedAdvisor} at all. Runs after the auto-proxy creator, so it sees the
 * proxy each bean ends up as; throws {@link UnhedgeableMethodException}, naming the bean and the
 * method.
 *
 * <p>Calls a bean makes to its own methods through {@code this} are not intercepted either (as with
 * {@code @Transactional}); that cannot be seen from here and is documented instead.
 *
 * <p>Thread-safe: the annotated methods of each class are computed once.
 */
public class HedgedMethodsValidator implements BeanPostProcessor, AopInfrastructureBean {
    private final Map<Class<?>, List<Method>> hedgedMethods = new ConcurrentHashMap<>();

    /** Created by the auto-configuration. */
    public HedgedMethodsValidator() {}

    /**
     * @param bean the bean, as the earlier post-processors left it (a proxy if it was proxied)
     * @param beanName its name
     * @return the bean, unchanged
     * @throws UnhedgeableMethodException if a {@code @Hedged} method of the bean cannot be intercepted
     */
    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof AopInfrastructureBean || bean instanceof Advisor) {
            return bean;
        }
        Class<?> targetClass = ClassUtils.getUserClass(AopUtils.getTargetClass(bean));
        if (Proxy.isProxyClass(targetClass) || ClassUtils.isLambdaClass(targetClass)) {
            return bean; // an interface-only proxy (a repository, an HTTP client): the interface carries it
        }
        List<Method> methods = hedgedMethods.computeIfAbsent(targetClass, HedgedMethods::hedgedMethodsOf);
        if (methods.isEmpty()) {
            return bean;
        }
        boolean advised = hasHedgedAdvisor(bean);
        boolean classBased = AopUtils.isCglibProxy(bean);
        for (Method m : methods) {
            int mod = m.getModifiers();
            if (Modifier.isStatic(mod)) {
                throw new UnhedgeableMethodException(
                        beanName,
                        m,
                        "it is static, and Spring's proxies intercept only instance methods;"
                                + " make it an instance method, or remove @Hedged");
            }
            if (Modifier.isPrivate(mod)) {
                throw new UnhedgeableMethodException(
                        beanName,
                        m,
                        "it is private, and Spring's proxies intercept only calls from other beans"
                                + " to non-private methods; make it public and call it through the bean");
            }
            if (!advised) {
                throw new UnhedgeableMethodException(
                        beanName,
                        m,
                        "the bean is not proxied with hedge's advisor (is it created before the"
                                + " auto-proxy creator, for instance by a BeanPostProcessor that depends on it?),"
                                + " so no call of it would be hedged");
            }
            if (classBased && Modifier.isFinal(mod)) {
                throw new UnhedgeableMethodException(
                        beanName,
                        m,
                        "it is final, so the class-based (CGLIB) proxy cannot override it: a call"
                                + " would run on the proxy instance itself, unhedged; remove 'final', or put"
                                + " @Hedged on an interface the bean implements and set"
                                + " spring.aop.proxy-target-class=false");
            }
        }
        return bean;
    }

    private static boolean hasHedgedAdvisor(Object bean) {
        if (!(bean instanceof Advised advised)) {
            return false;
        }
        for (Advisor a : advised.getAdvisors()) {
            if (a instanceof HedgedAdvisor || a.getAdvice() instanceof HedgedInterceptor) {
                return true;
            }
        }
        return false;
    }
}

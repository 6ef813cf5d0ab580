package io.github.hedge.spring.aop;

import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.internal.EditDistance;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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
 * <p>It also logs at WARN, once per method, a {@code @Hedged} name that is not listed under {@code
 * hedge.instances} (its calls use {@code hedge.defaults}), with the nearest listed name: a
 * misspelt name would otherwise go unnoticed until the first call.
 *
 * <p>Calls a bean makes to its own methods through {@code this} are not intercepted either (as with
 * {@code @Transactional}); that cannot be seen from here and is documented instead.
 *
 * <p>Thread-safe: the annotated methods of each class are computed once.
 */
public class HedgedMethodsValidator implements BeanPostProcessor, AopInfrastructureBean {
    private static final Logger log = LoggerFactory.getLogger(HedgedMethodsValidator.class);

    private final Map<Class<?>, List<Method>> hedgedMethods = new ConcurrentHashMap<>();
    private final Supplier<Set<String>> listedInstances;
    private volatile Set<String> listed;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /** A check that does not look at instance names. */
    public HedgedMethodsValidator() {
        this(null);
    }

    /**
     * @param listedInstances the names under {@code hedge.instances}, asked once, on the first bean
     *     with a {@code @Hedged} method; a name not among them is logged at WARN once per method,
     *     with the nearest listed name. Null: names are not checked.
     */
    public HedgedMethodsValidator(Supplier<Set<String>> listedInstances) {
        this.listedInstances = listedInstances;
    }

    /**
     * @param bean the bean, as the earlier post-processors left it (a proxy if it was proxied)
     * @param beanName its name
     * @return the bean, unchanged
     * @throws UnhedgeableMethodException if a {@code @Hedged} method of the bean cannot be intercepted
     */
    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof AopInfrastructureBean || bean instanceof Advisor) {
            // also a scoped proxy (@RequestScope, @RefreshScope): its target bean is checked on its own
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
            Hedged hedged = HedgedMethods.find(m, targetClass);
            String problem = hedged != null ? HedgedMethods.problem(m, targetClass, hedged) : null;
            if (problem != null) {
                throw new UnhedgeableMethodException(beanName, m, problem);
            }
            if (!advised) {
                throw new UnhedgeableMethodException(
                        beanName,
                        m,
                        "the bean is not proxied with hedge's advisor (is it created before the"
                                + " auto-proxy creator, for instance by a BeanPostProcessor that depends on it?),"
                                + " so no call of it would be hedged");
            }
            if (hedged != null) {
                warnIfNotListed(hedged.value(), m, beanName);
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

    private void warnIfNotListed(String name, Method m, String beanName) {
        if (listedInstances == null) {
            return;
        }
        Set<String> names = listed;
        if (names == null) {
            names = Set.copyOf(listedInstances.get());
            listed = names;
        }
        if (names.contains(name) || !warned.add(m.getDeclaringClass().getName() + "#" + m.getName() + "#" + name)) {
            return;
        }
        String nearest = null;
        int best = 3; // at most two edits away
        for (String candidate : names) {
            int d = EditDistance.between(name, candidate);
            if (d < best) {
                best = d;
                nearest = candidate;
            }
        }
        log.warn(
                "@Hedged(\"{}\") on {}.{}() of bean '{}' names no instance under hedge.instances{}; its calls use"
                        + " hedge.defaults{}",
                name,
                m.getDeclaringClass().getName(),
                m.getName(),
                beanName,
                names.isEmpty() ? "" : " (listed: " + String.join(", ", new TreeSet<>(names)) + ")",
                nearest != null ? "; did you mean '" + nearest + "'?" : "");
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

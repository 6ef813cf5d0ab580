package io.github.hedge.spring.aop;

import io.github.hedge.spring.annotation.Hedged;
import java.lang.reflect.Method;

/**
 * A bean has a {@link Hedged} method that its proxy cannot intercept (a {@code final} method under
 * a class-based proxy, a {@code private} or {@code static} method, a bean that is not proxied), so
 * its calls would run unhedged. Thrown by {@link HedgedMethodsValidator} when the bean is created,
 * which fails the application's start; the message names the bean, the method and the fix.
 *
 * <p>Immutable, thread-safe.
 */
public class UnhedgeableMethodException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String beanName;
    private final String method;

    /**
     * @param beanName the bean's name
     * @param method the annotated method
     * @param reason why its calls would not be hedged, and what to do
     */
    public UnhedgeableMethodException(String beanName, Method method, String reason) {
        super("@Hedged method " + method.getDeclaringClass().getName() + "." + method.getName() + "() of bean '"
                + beanName + "' cannot be hedged: " + reason);
        this.beanName = beanName;
        this.method = method.getDeclaringClass().getName() + "." + method.getName();
    }

    /** @return the bean's name */
    public String getBeanName() {
        return beanName;
    }

    /** @return the method, as {@code com.example.UserService.find} */
    public String getMethod() {
        return method;
    }
}

package io.github.hedge.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a Spring bean method as a hedged call through the named instance ({@code hedge.instances.<name>},
 * or {@code hedge.defaults} for a name that is not listed).
 *
 * <ul>
 *   <li>A method returning {@code CompletionStage} or {@code CompletableFuture} runs through the
 *       async form: each attempt invokes the method again (on the thread that starts the attempt: the
 *       caller's for the primary, the hedge timer's for hedges), and a losing attempt's future is
 *       cancelled.
 *   <li>A method returning reactor's {@code Mono}, and a Kotlin {@code suspend} function (which
 *       Spring's AOP runs as a {@code Mono}), runs through hedge-reactor (it must be on the class
 *       path): each subscription to the returned {@code Mono} is one call, each attempt invokes the
 *       method again when it starts (the primary on the subscribing thread, hedges on the hedge
 *       timer's) and subscribes to its {@code Mono}; a losing attempt's subscription is cancelled,
 *       and the subscriber's Reactor {@code Context} reaches every attempt.
 *   <li>Any other method runs its attempts on the instance's attempt executor (the bean named {@code
 *       hedgeAttemptExecutor}, else a virtual thread per attempt on JDK 21+, else a shared cached
 *       pool) while the caller waits; a losing attempt's thread is interrupted. Thread-bound context
 *       (transactions, security context, MDC) is not carried into attempts unless a context
 *       propagator is configured with a {@code HedgeConfigCustomizer}.
 *   <li>A call is hedged only if it is idempotent: {@link #idempotent()} decides, else the instance's
 *       {@code idempotent} property, whose default is {@code false}. A call that is not idempotent
 *       invokes the method exactly once.
 * </ul>
 *
 * Other results that complete later ({@code Future}, a {@code Flux} or any other Reactive Streams
 * {@code Publisher}, a JDK {@code Flow.Publisher}, a Kotlin {@code Flow}) and a {@code Mono} or
 * {@code suspend} function without hedge-reactor fail the bean's creation with {@link
 * io.github.hedge.spring.aop.UnhedgeableMethodException}: the method returns at once, so hedging
 * would have nothing to do, or its result is a stream with no single answer.
 *
 * <p>The annotation is found as Spring finds {@code @Transactional}, under class-based and
 * interface-based proxies alike: on the bean's method or a method it overrides or implements (an
 * interface's, a superclass's), then on the declaring class and its supertypes, then on the
 * interface method called and its interface; the first found wins. It may be used as a
 * meta-annotation. On a type, it applies to the type's public instance methods, not to those
 * {@code Object} declares.
 *
 * <p>Only calls through the bean's proxy are hedged: a bean calling its own method through {@code
 * this} runs it once, unhedged, as with {@code @Transactional}. A {@code private} or {@code static}
 * annotated method, a {@code final} one under a class-based proxy, or an annotated bean that was not
 * proxied fails the bean's creation with {@link
 * io.github.hedge.spring.aop.UnhedgeableMethodException}, naming the bean and the method.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Hedged {
    /** @return the instance name, as in {@code hedge.instances.<name>} */
    String value();

    /** @return whether the method may run more than once; default: the instance's {@code idempotent} */
    Idempotence idempotent() default Idempotence.FROM_INSTANCE;

    /** Whether a hedged method may run more than once per call. */
    enum Idempotence {
        /** Use the instance's {@code idempotent} property (default {@code false}). */
        FROM_INSTANCE,
        /** The method may run more than once: hedge it. */
        IDEMPOTENT,
        /** The method must run exactly once: never hedge it. */
        NOT_IDEMPOTENT
    }
}

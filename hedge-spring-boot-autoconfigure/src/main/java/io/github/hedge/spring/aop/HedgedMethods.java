package io.github.hedge.spring.aop;

import io.github.hedge.spring.annotation.Hedged;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds the {@link Hedged} that applies to a method, the way Spring finds {@code @Transactional}:
 * the most specific method first (the target class's implementation), searched with the methods it
 * overrides or implements (superclasses and interfaces) and through meta-annotations; then the
 * type that declares it and that type's hierarchy; then, for a method called through an interface,
 * the interface method and the interface. A type-level annotation applies only to public,
 * non-static methods, never to those {@code Object} declares. Stateless, thread-safe.
 */
final class HedgedMethods {
    /** Spring's {@code @Async} (spring-context), or null if absent. */
    private static final Class<? extends Annotation> ASYNC = asyncAnnotation();

    private static final String MONO = "reactor.core.publisher.Mono";
    private static final String FLUX = "reactor.core.publisher.Flux";
    private static final String KOTLIN_FLOW = "kotlinx.coroutines.flow.Flow";

    /** Whether hedge-reactor (and so reactor-core) is on the class path. */
    private static final boolean HEDGE_REACTOR =
            ClassUtils.isPresent("io.github.hedge.reactor.HedgedMono", HedgedMethods.class.getClassLoader());

    /** Whether Spring's coroutine bridge can run a suspend function as a Mono (as Spring AOP checks it). */
    private static final boolean COROUTINES_REACTOR =
            ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt", HedgedMethods.class.getClassLoader());

    private HedgedMethods() {}

    @SuppressWarnings("unchecked")
    private static Class<? extends Annotation> asyncAnnotation() {
        try {
            return (Class<? extends Annotation>) ClassUtils.forName(
                    "org.springframework.scheduling.annotation.Async", HedgedMethods.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }

    /**
     * @param method the method called (for a JDK proxy, the interface method)
     * @param targetClass the target's class, or null if unknown
     * @return the annotation that applies, or null
     */
    static Hedged find(Method method, Class<?> targetClass) {
        if (method.getDeclaringClass() == Object.class) {
            return null;
        }
        Class<?> userClass = targetClass != null ? ClassUtils.getUserClass(targetClass) : null;
        Method specific = userClass != null ? AopUtils.getMostSpecificMethod(method, userClass) : method;
        Hedged hedged = onMethodOrType(specific);
        if (hedged == null && specific != method) {
            hedged = onMethodOrType(method);
        }
        return hedged;
    }

    private static Hedged onMethodOrType(Method method) {
        Hedged hedged = AnnotatedElementUtils.findMergedAnnotation(method, Hedged.class);
        if (hedged == null && typeLevelApplies(method)) {
            hedged = AnnotatedElementUtils.findMergedAnnotation(method.getDeclaringClass(), Hedged.class);
        }
        return hedged;
    }

    /** Whether an annotation on the method's type applies to it: public, not static, not Object's. */
    static boolean typeLevelApplies(Method method) {
        int m = method.getModifiers();
        return Modifier.isPublic(m)
                && !Modifier.isStatic(m)
                && method.getDeclaringClass() != Object.class
                && !method.isSynthetic();
    }

    /**
     * @param type a bean's class (not a proxy's)
     * @return every method a call of which on an instance of {@code type} is meant to be hedged:
     *     the methods {@code type} declares or inherits (the most specific of each signature), for
     *     which {@link #find} finds an annotation
     */
    static List<Method> hedgedMethodsOf(Class<?> type) {
        List<Method> found = new ArrayList<>();
        if (!AnnotationUtils.isCandidateClass(type, Hedged.class)) {
            return found;
        }
        for (Method m : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
            if (m.isBridge() || m.isSynthetic()) {
                continue;
            }
            if (find(m, type) != null) {
                found.add(m);
            }
        }
        return found;
    }

    /**
     * @param method an annotated method
     * @param targetClass the target's class, or null if unknown
     * @param hedged its annotation
     * @return why no call of it can be hedged, or null if it can be
     */
    static String problem(Method method, Class<?> targetClass, Hedged hedged) {
        if (hedged.value().isBlank()) {
            return "@Hedged must name an instance, was blank";
        }
        Class<?> rt = method.getReturnType();
        if (isSpringAsync(method, targetClass)) {
            if (rt != void.class && returnsLater(rt) && !rt.isAssignableFrom(CompletableFuture.class)) {
                return "it is also @Async, and its result, a " + rt.getName() + ", is not a CompletableFuture, a"
                        + " CompletionStage or a Future that hedge could hand back to @Async";
            }
            return null;
        }
        if (KotlinDetector.isSuspendingFunction(method)) {
            if (!HEDGE_REACTOR || !COROUTINES_REACTOR) {
                return "it is a suspend function, which hedge runs as a reactor Mono; add"
                        + " io.github.hedge:hedge-reactor and org.jetbrains.kotlinx:kotlinx-coroutines-reactor"
                        + " to the class path";
            }
            return null;
        }
        if (rt.getName().equals(MONO)) {
            return HEDGE_REACTOR
                    ? null
                    : "its result, a " + MONO + ", needs hedge-reactor to be hedged; add"
                            + " io.github.hedge:hedge-reactor to the class path";
        }
        if (isNamed(rt, FLUX) || isNamed(rt, KOTLIN_FLOW) || isPublisher(rt)) {
            return "its result, a " + rt.getName() + ", is a stream that completes after the method returns,"
                    + " and hedge hedges calls that have one answer, so nothing would be hedged; return a"
                    + " reactor Mono (with hedge-reactor; Flux.next() or collectList() make one), a"
                    + " CompletionStage or a value";
        }
        if (!isAsync(rt) && returnsLater(rt)) {
            return "its result, a " + rt.getName() + ", completes after the method returns, so every attempt"
                    + " would end at once and nothing would be hedged; return a CompletionStage, a"
                    + " CompletableFuture or a value";
        }
        return null;
    }

    /**
     * Whether Spring's {@code @Async} is on the method or its class (or their supertypes). Spring's
     * {@code @Async} advisor always runs outside hedge's, so the method's body runs on @Async's
     * thread and returns a completed future: hedge runs it as a blocking call.
     */
    static boolean isSpringAsync(Method method, Class<?> targetClass) {
        if (ASYNC == null) {
            return false;
        }
        Method specific = targetClass != null
                ? AopUtils.getMostSpecificMethod(method, ClassUtils.getUserClass(targetClass))
                : method;
        return AnnotatedElementUtils.hasAnnotation(specific, ASYNC)
                || AnnotatedElementUtils.hasAnnotation(specific.getDeclaringClass(), ASYNC)
                || AnnotatedElementUtils.hasAnnotation(method, ASYNC)
                || AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), ASYNC);
    }

    /**
     * Whether calls of the method run through hedge-reactor: it returns reactor's {@code Mono}, or it
     * is a Kotlin {@code suspend} function (Spring's AOP bridge hands the interceptor a {@code Mono}
     * of its result and awaits what the interceptor returns).
     */
    static boolean isReactive(Method method) {
        return method.getReturnType().getName().equals(MONO) || KotlinDetector.isSuspendingFunction(method);
    }

    /** Whether {@code type} is, extends or implements the class or interface named {@code name}. */
    private static boolean isNamed(Class<?> type, String name) {
        if (type == null) {
            return false;
        }
        if (type.getName().equals(name)) {
            return true;
        }
        for (Class<?> i : type.getInterfaces()) {
            if (isNamed(i, name)) {
                return true;
            }
        }
        return isNamed(type.getSuperclass(), name);
    }

    /** Whether calls of a method with this result run through the async form. */
    static boolean isAsync(Class<?> rt) {
        return CompletionStage.class.isAssignableFrom(rt) && rt.isAssignableFrom(CompletableFuture.class);
    }

    /** A result that completes after the method returned, other than the two supported stages. */
    private static boolean returnsLater(Class<?> type) {
        return Future.class.isAssignableFrom(type) || CompletionStage.class.isAssignableFrom(type) || isPublisher(type);
    }

    /**
     * Whether {@code type} is or extends a Reactive Streams {@code Publisher} (found by name: the API
     * is optional) or the JDK's {@link java.util.concurrent.Flow.Publisher}. Walks super-interfaces
     * too: reactor's {@code Mono} implements {@code CorePublisher}, which extends {@code Publisher}.
     */
    private static boolean isPublisher(Class<?> type) {
        if (type == null) {
            return false;
        }
        if (type == java.util.concurrent.Flow.Publisher.class
                || type.getName().equals("org.reactivestreams.Publisher")) {
            return true;
        }
        for (Class<?> i : type.getInterfaces()) {
            if (isPublisher(i)) {
                return true;
            }
        }
        return isPublisher(type.getSuperclass());
    }
}

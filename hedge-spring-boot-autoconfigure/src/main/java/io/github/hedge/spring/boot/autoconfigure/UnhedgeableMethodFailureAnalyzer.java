package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.spring.aop.UnhedgeableMethodException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@link UnhedgeableMethodException} (a {@code @Hedged} method its proxy cannot
 * intercept) as a short start-up failure naming the bean, the method and the fix. Registered in
 * {@code META-INF/spring.factories}. Stateless, thread-safe.
 */
public class UnhedgeableMethodFailureAnalyzer extends AbstractFailureAnalyzer<UnhedgeableMethodException> {

    /** Creates the analyzer (Spring Boot instantiates it from {@code spring.factories}). */
    public UnhedgeableMethodFailureAnalyzer() {}

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnhedgeableMethodException cause) {
        return new FailureAnalysis(
                cause.getMessage() + ".",
                "Change the method of bean '" + cause.getBeanName() + "' as the description says (see the @Hedged"
                        + " section of docs/spring-boot.md).",
                cause);
    }
}

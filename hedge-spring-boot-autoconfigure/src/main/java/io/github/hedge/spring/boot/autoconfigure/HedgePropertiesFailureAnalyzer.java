package io.github.hedge.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@link InvalidHedgePropertyException} as a short start-up failure: the property, its
 * valid range and the value, instead of a stack trace from deep inside bean creation. Registered in
 * {@code META-INF/spring.factories}. Stateless, thread-safe.
 */
public class HedgePropertiesFailureAnalyzer extends AbstractFailureAnalyzer<InvalidHedgePropertyException> {

    /** Creates the analyzer (Spring Boot instantiates it from {@code spring.factories}). */
    public HedgePropertiesFailureAnalyzer() {}

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidHedgePropertyException cause) {
        return new FailureAnalysis(
                "Invalid hedge configuration: " + cause.getMessage() + ".",
                "Update '" + cause.getProperty() + "' so that it is " + cause.getValidRange()
                        + " (see docs/spring-boot.md for every hedge.* property and its default).",
                cause);
    }
}

package io.github.hedge.spring.boot.autoconfigure;

import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

/**
 * Reports a {@code hedge.*} property that binds to nothing (a misspelt key) as a short start-up
 * failure naming the key, where it was set, and the nearest valid key: "Unknown property
 * 'hedge.instances.users.max-extra-lod'; did you mean 'hedge.instances.users.max-extra-load'?".
 * {@link HedgeProperties} is bound with {@code ignoreUnknownFields = false}, so Spring Boot fails the
 * start on such a key; this analyzer runs before Spring Boot's own, which names the key but not the
 * fix. Keys of other prefixes are left to Spring Boot's. Registered in {@code
 * META-INF/spring.factories}. Stateless, thread-safe.
 */
public class UnknownHedgePropertyFailureAnalyzer
        extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException> implements Ordered {

    /** Creates the analyzer (Spring Boot instantiates it from {@code spring.factories}). */
    public UnknownHedgePropertyFailureAnalyzer() {}

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
        String description = HedgePropertyNames.describeUnknown(cause);
        if (description == null) {
            return null;
        }
        return new FailureAnalysis(
                "Invalid hedge configuration:\n" + description,
                "Correct or remove the misspelt hedge.* key: a resilience setting that binds to nothing would do"
                        + " nothing. Spring Boot's relaxed forms of a valid key (kebab-case, camelCase,"
                        + " underscores) are accepted; docs/spring-boot.md lists every hedge.* property.",
                cause);
    }

    /** @return before Spring Boot's own analyzers */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}

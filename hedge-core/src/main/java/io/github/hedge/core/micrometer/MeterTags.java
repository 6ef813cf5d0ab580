package io.github.hedge.core.micrometer;

import java.util.Locale;
import java.util.Set;

/** The tag keys and fixed values of {@link HedgeMetrics}' meters. Constants only. */
final class MeterTags {
    private MeterTags() {}

    /** Distinct {@code operation} tag values per registry before further ones become {@code other}. */
    static final int MAX_OPERATIONS = 100;

    static final String NAME = "name";
    static final String OUTCOME = "outcome";
    static final String KIND = "kind";
    static final String REASON = "reason";
    static final String OPERATION = "operation";
    static final String NO_OPERATION = "none";
    static final String OTHER_OPERATION = "other";

    /** Keys the user's extra tags may not use. */
    static final Set<String> RESERVED = Set.of(NAME, OUTCOME, KIND, REASON, OPERATION);
    /** Values of {@link #KIND}, by index: an attempt numbered 1 is the primary. */
    static final String[] KINDS = {"primary", "hedge"};

    /** @return the tag value of an enum constant: its name in lower case */
    static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}

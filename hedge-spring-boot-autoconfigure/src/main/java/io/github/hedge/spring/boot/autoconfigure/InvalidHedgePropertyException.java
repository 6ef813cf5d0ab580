package io.github.hedge.spring.boot.autoconfigure;

/**
 * A {@code hedge.*} property holds a value outside its valid range. Thrown while the application
 * starts (or when an instance is reconfigured at runtime); {@link HedgePropertiesFailureAnalyzer}
 * turns it into a start-up report naming the property, its valid range and the value.
 *
 * <p>Immutable, thread-safe.
 */
public class InvalidHedgePropertyException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String property;
    private final transient Object value;
    private final String validRange;

    /**
     * @param property the full property name, e.g. {@code hedge.instances.user-reads.max-extra-load}
     * @param value the value found (may be null when a required value is missing)
     * @param validRange what would be valid, e.g. {@code in (0, 1)}
     */
    public InvalidHedgePropertyException(String property, Object value, String validRange) {
        super(property + " must be " + validRange + ", was " + value);
        this.property = property;
        this.value = value;
        this.validRange = validRange;
    }

    /** @return the full property name */
    public String getProperty() {
        return property;
    }

    /** @return the value found */
    public Object getValue() {
        return value;
    }

    /** @return the valid range, e.g. {@code in (0, 1)} */
    public String getValidRange() {
        return validRange;
    }
}

package io.github.hedge.http.internal;

/** Argument checks with messages that name the setting, its range and the value. Stateless. */
public final class Checks {
    private Checks() {}

    /**
     * @param name the setting
     * @param value its value
     * @param min the least valid value
     * @param max the greatest valid value
     * @return {@code value}
     * @throws IllegalArgumentException if it is out of range
     */
    public static int inRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], was " + value);
        }
        return value;
    }
}

package io.github.hedge.benchmarks.sim;

/**
 * A minimal JSON writer: nested objects and arrays of numbers, strings and booleans, written in
 * order into one line. Numbers are finite doubles or longs; a non-finite double is written as
 * {@code null}. No dependency, no reflection.
 */
public final class Json {
    private final StringBuilder out = new StringBuilder();
    private boolean first = true;

    /** Starts a writer positioned at the start of the top-level value. */
    public Json() {}

    /** @return this, after opening an object (top-level or as an array element) */
    public Json beginObject() {
        comma();
        out.append('{');
        first = true;
        return this;
    }

    /**
     * @param name the member name
     * @return this, after opening an object member
     */
    public Json beginObject(String name) {
        key(name);
        out.append('{');
        first = true;
        return this;
    }

    /** @return this, after closing the current object */
    public Json endObject() {
        out.append('}');
        first = false;
        return this;
    }

    /**
     * @param name the member name
     * @return this, after opening an array member
     */
    public Json beginArray(String name) {
        key(name);
        out.append('[');
        first = true;
        return this;
    }

    /** @return this, after closing the current array */
    public Json endArray() {
        out.append(']');
        first = false;
        return this;
    }

    /**
     * @param name the member name
     * @param value the value
     * @return this
     */
    public Json field(String name, double value) {
        key(name);
        number(value);
        return this;
    }

    /**
     * @param name the member name
     * @param value the value
     * @return this
     */
    public Json field(String name, long value) {
        key(name);
        out.append(value);
        return this;
    }

    /**
     * @param name the member name
     * @param value the value
     * @return this
     */
    public Json field(String name, boolean value) {
        key(name);
        out.append(value);
        return this;
    }

    /**
     * @param name the member name
     * @param value the value; {@code null} writes JSON null
     * @return this
     */
    public Json field(String name, String value) {
        key(name);
        string(value);
        return this;
    }

    /**
     * @param value an array element
     * @return this
     */
    public Json value(double value) {
        comma();
        number(value);
        return this;
    }

    /**
     * @param value an array element
     * @return this
     */
    public Json value(String value) {
        comma();
        string(value);
        return this;
    }

    private void key(String name) {
        comma();
        string(name);
        out.append(':');
    }

    private void comma() {
        if (!first) {
            out.append(',');
        }
        first = false;
    }

    private void number(double v) {
        if (!Double.isFinite(v)) {
            out.append("null");
        } else if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            out.append((long) v).append(".0");
        } else {
            out.append(v);
        }
    }

    private void string(String s) {
        if (s == null) {
            out.append("null");
            return;
        }
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    @Override
    public String toString() {
        return out.toString();
    }
}

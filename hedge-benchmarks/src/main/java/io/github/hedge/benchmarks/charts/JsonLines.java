package io.github.hedge.benchmarks.charts;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON reader for the simulator's raw output, one JSON value per line: objects become
 * {@link LinkedHashMap}s (member order kept), arrays {@link List}s, numbers {@link Double}s, and
 * {@code true}, {@code false}, {@code null} themselves. No dependency. Stateless; thread-safe.
 */
final class JsonLines {
    private final String text;
    private int at;

    private JsonLines(String text) {
        this.text = text;
    }

    /** Parses every non-blank line of {@code text} as one JSON value. */
    static List<Object> parse(String text) {
        List<Object> values = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.isBlank()) {
                JsonLines reader = new JsonLines(line);
                Object value = reader.value();
                reader.skipSpace();
                if (reader.at != line.length()) {
                    throw reader.error("trailing characters");
                }
                values.add(value);
            }
        }
        return values;
    }

    private Object value() {
        skipSpace();
        if (at >= text.length()) {
            throw error("unexpected end");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                return number();
        }
    }

    private Map<String, Object> object() {
        Map<String, Object> members = new LinkedHashMap<>();
        at++;
        skipSpace();
        if (peek() == '}') {
            at++;
            return members;
        }
        while (true) {
            skipSpace();
            String name = string();
            skipSpace();
            expect(':');
            members.put(name, value());
            skipSpace();
            if (peek() == ',') {
                at++;
            } else {
                expect('}');
                return members;
            }
        }
    }

    private List<Object> array() {
        List<Object> elements = new ArrayList<>();
        at++;
        skipSpace();
        if (peek() == ']') {
            at++;
            return elements;
        }
        while (true) {
            elements.add(value());
            skipSpace();
            if (peek() == ',') {
                at++;
            } else {
                expect(']');
                return elements;
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            if (at >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c == '\\') {
                char e = text.charAt(at++);
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(e);
                }
            } else {
                out.append(c);
            }
        }
    }

    private Double number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        if (start == at) {
            throw error("unexpected character '" + text.charAt(at) + "'");
        }
        return Double.valueOf(text.substring(start, at));
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error("expected " + word);
        }
        at += word.length();
        return value;
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        at++;
    }

    private char peek() {
        return at < text.length() ? text.charAt(at) : '\0';
    }

    private void skipSpace() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("invalid JSON at column " + (at + 1) + ": " + what);
    }
}

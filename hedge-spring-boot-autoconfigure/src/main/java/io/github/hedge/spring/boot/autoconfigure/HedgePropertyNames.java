package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.spring.internal.EditDistance;
import java.beans.PropertyDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Every {@code hedge.*} property name {@link HedgeProperties} binds, as kebab-case templates with
 * {@code *} for a map key ({@code hedge.instances.*.max-extra-load}), and the nearest of them to a
 * name that bound nothing, for the "did you mean" of a start-up failure. Stateless, thread-safe.
 */
final class HedgePropertyNames {
    /** The valid names, each split into elements; {@code *} stands for any one map key. */
    private static final Map<List<String>, Class<?>> TYPES = templates();

    private static final List<List<String>> TEMPLATES = List.copyOf(TYPES.keySet());

    private HedgePropertyNames() {}

    /**
     * @param e a binding failure
     * @return the {@code hedge.*} properties it left unbound, or an empty list if it is not about
     *     unbound {@code hedge.*} properties
     */
    static List<ConfigurationProperty> unboundHedgeProperties(Throwable e) {
        List<ConfigurationProperty> found = new ArrayList<>();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof UnboundConfigurationPropertiesException unbound) {
                for (ConfigurationProperty p : unbound.getUnboundProperties()) {
                    if (p.getName().getNumberOfElements() > 0
                            && p.getName()
                                    .getElement(0, ConfigurationPropertyName.Form.UNIFORM)
                                    .equals("hedge")) {
                        found.add(p);
                    }
                }
                return found;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return found;
    }

    /**
     * @param property a {@code hedge.*} property that bound nothing
     * @return one sentence naming it, where it was set, and the nearest valid name (or the valid
     *     names next to it)
     */
    static String describeUnknown(ConfigurationProperty property) {
        String written = written(property);
        StringBuilder sb =
                new StringBuilder("Unknown property '").append(written).append("'");
        Origin origin = property.getOrigin();
        if (origin != null) {
            sb.append(" (").append(origin).append(")");
        }
        String nearest = bracketed(written);
        if (nearest == null) {
            nearest = nearest(property.getName());
        }
        if (nearest != null) {
            sb.append("; did you mean '").append(nearest).append("'?");
        } else {
            List<String> siblings = siblings(property.getName());
            if (!siblings.isEmpty()) {
                sb.append("; valid there: ").append(String.join(", ", siblings));
            }
        }
        return sb.toString();
    }

    /**
     * @param e a binding failure, as {@link BindException} or one of its causes
     * @return a message naming every unknown {@code hedge.*} property and the nearest valid name,
     *     or null if {@code e} is not about unknown {@code hedge.*} properties
     */
    static String describeUnknown(Throwable e) {
        List<ConfigurationProperty> unknown = unboundHedgeProperties(e);
        if (unknown.isEmpty()) {
            return null;
        }
        List<String> lines = new ArrayList<>();
        unknown.forEach(p -> lines.add(describeUnknown(p)));
        return String.join("\n", lines);
    }

    /**
     * A map key written without brackets though it holds dots, a slash or a star: {@code
     * hedge.grpc.methods.shop.Catalog/GetItem.idempotent} for {@code
     * hedge.grpc.methods[shop.Catalog/GetItem].idempotent}.
     *
     * @param written the name as written
     * @return the bracketed name, or null if the name is not of that kind
     */
    static String bracketed(String written) {
        for (List<String> template : TEMPLATES) {
            int star = template.indexOf("*");
            if (star < 0 || star == template.size() - 1) {
                continue;
            }
            String prefix = String.join(".", template.subList(0, star)) + ".";
            String suffix = "." + String.join(".", template.subList(star + 1, template.size()));
            if (written.length() > prefix.length() + suffix.length()
                    && written.startsWith(prefix)
                    && written.endsWith(suffix)) {
                String key = written.substring(prefix.length(), written.length() - suffix.length());
                if (!key.contains("[") && (key.contains(".") || key.contains("/") || key.contains("*"))) {
                    return prefix.substring(0, prefix.length() - 1) + "[" + key + "]" + suffix;
                }
            }
        }
        return null;
    }

    /** The name as the user wrote it, when the source says; else its canonical form. */
    private static String written(ConfigurationProperty property) {
        Origin origin = property.getOrigin();
        while (origin != null) {
            if (origin instanceof PropertySourceOrigin pso) {
                return pso.getPropertyName();
            }
            origin = origin.getParent();
        }
        return property.getName().toString();
    }

    /**
     * @param unknown a name that bound nothing
     * @return the valid name nearest to it, with its map keys, or null if none is near
     */
    static String nearest(ConfigurationPropertyName unknown) {
        List<String> u = elements(unknown);
        String target = canonical(u);
        String best = null;
        int bestScore = Integer.MAX_VALUE;
        for (List<String> template : TEMPLATES) {
            List<String> candidate = fill(template, u);
            if (candidate == null) {
                continue;
            }
            int distance = EditDistance.between(target, canonical(candidate));
            int score = distance;
            // the last element right, the path to it wrong ("users.percentile" for "users.delay.percentile")
            if (squash(candidate.get(candidate.size() - 1)).equals(squash(u.get(u.size() - 1)))
                    && u.size() > 1
                    && squash(candidate.get(1)).equals(squash(u.get(1)))) {
                score = Math.min(score, 2);
            }
            score = score * 1000 + distance; // ties go to the nearer spelling
            if (score < bestScore) {
                bestScore = score;
                best = render(candidate);
            }
        }
        return bestScore / 1000 <= 3 ? best : null;
    }

    /** The valid names in the deepest block the unknown name shares with some valid name. */
    private static List<String> siblings(ConfigurationPropertyName unknown) {
        List<String> u = elements(unknown);
        for (int depth = u.size() - 1; depth > 0; depth--) {
            List<String> out = new ArrayList<>();
            for (List<String> template : TEMPLATES) {
                if (template.size() > depth && matchesPrefix(template, u, depth)) {
                    List<String> rest = template.subList(depth, template.size());
                    out.add(String.join(".", rest));
                }
            }
            if (!out.isEmpty()) {
                return out;
            }
        }
        return List.of();
    }

    private static boolean matchesPrefix(List<String> template, List<String> u, int depth) {
        for (int i = 0; i < depth; i++) {
            if (!template.get(i).equals("*") && !squash(template.get(i)).equals(squash(u.get(i)))) {
                return false;
            }
        }
        return true;
    }

    /**
     * The template with its map keys taken from {@code u} at the same positions; null if {@code u}
     * has no element where the template has a map key, or has elements past the template's end
     * other than list indexes.
     */
    private static List<String> fill(List<String> template, List<String> u) {
        List<String> out = new ArrayList<>(Math.max(u.size(), template.size()));
        for (int i = 0; i < template.size(); i++) {
            if (template.get(i).equals("*")) {
                if (i >= u.size()) {
                    return null;
                }
                out.add(u.get(i));
            } else {
                out.add(template.get(i));
            }
        }
        for (int i = template.size(); i < u.size(); i++) {
            if (!u.get(i).matches("[0-9]+")) {
                return null;
            }
            out.add(u.get(i)); // non-fatal-codes[0]
        }
        return out;
    }

    private static List<String> elements(ConfigurationPropertyName name) {
        List<String> out = new ArrayList<>(name.getNumberOfElements());
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            out.add(name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL));
        }
        return out;
    }

    private static String render(List<String> elements) {
        StringBuilder sb = new StringBuilder();
        for (String e : elements) {
            boolean plain = e.matches("[a-z0-9-]+") && !e.matches("[0-9]+");
            if (!plain) {
                sb.append('[').append(e).append(']');
            } else {
                if (sb.length() > 0) {
                    sb.append('.');
                }
                sb.append(e);
            }
        }
        return sb.toString();
    }

    /** Lower case, without dashes and underscores: the forms relaxed binding treats as one. */
    private static String squash(String element) {
        return element.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
    }

    private static String canonical(List<String> elements) {
        List<String> out = new ArrayList<>(elements.size());
        elements.forEach(e -> out.add(squash(e)));
        return String.join(".", out);
    }

    /** @return every valid name, as templates, in kebab-case */
    static List<String> all() {
        List<String> out = new ArrayList<>();
        TEMPLATES.forEach(t -> out.add(String.join(".", t)));
        return out;
    }

    private static Map<List<String>, Class<?>> templates() {
        Map<List<String>, Class<?>> out = new LinkedHashMap<>();
        walk(HedgeProperties.class, List.of("hedge"), out);
        return Collections.unmodifiableMap(out);
    }

    private static void walk(Class<?> type, List<String> path, Map<List<String>, Class<?>> out) {
        for (PropertyDescriptor pd : BeanUtils.getPropertyDescriptors(type)) {
            if (pd.getReadMethod() == null || pd.getName().equals("class")) {
                continue;
            }
            List<String> here = new ArrayList<>(path);
            here.add(kebab(pd.getName()));
            Class<?> t = pd.getPropertyType();
            if (isNested(t)) {
                walk(t, here, out);
            } else if (Map.class.isAssignableFrom(t)) {
                here.add("*");
                Class<?> value = ResolvableType.forMethodReturnType(pd.getReadMethod())
                        .asMap()
                        .resolveGeneric(1);
                if (value != null && isNested(value)) {
                    walk(value, here, out);
                } else {
                    out.put(List.copyOf(here), value != null ? value : Object.class);
                }
            } else if (pd.getWriteMethod() != null || Collection.class.isAssignableFrom(t)) {
                out.put(List.copyOf(here), t);
            }
        }
    }

    /**
     * @param name a {@code hedge.*} name in any relaxed form
     * @return the type of the property it binds to, or null if it binds to none
     */
    static Class<?> typeOf(ConfigurationPropertyName name) {
        List<String> u = elements(name);
        for (Map.Entry<List<String>, Class<?>> e : TYPES.entrySet()) {
            List<String> t = e.getKey();
            boolean collection = Collection.class.isAssignableFrom(e.getValue());
            if (u.size() < t.size() || (u.size() > t.size() && !collection)) {
                continue;
            }
            if (!matchesPrefix(t, u, t.size())) {
                continue;
            }
            boolean indexesOnly = true;
            for (int i = t.size(); i < u.size(); i++) {
                indexesOnly &= u.get(i).matches("[0-9]+");
            }
            if (indexesOnly) {
                return e.getValue();
            }
        }
        return null;
    }

    /**
     * What Spring Boot's own check leaves out, and a bare number given for a duration: the {@code
     * HEDGE_*} environment variables and {@code hedge.*} system properties that bind to nothing (Spring
     * Boot does not check those sources), and {@code hedge.*} durations written without a unit (read
     * as milliseconds).
     *
     * @param environment the application's environment
     * @return one warning per such key, naming it and what to write instead
     */
    static List<String> environmentWarnings(ConfigurableEnvironment environment) {
        List<String> warnings = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (PropertySource<?> source : environment.getPropertySources()) {
            if (!(source instanceof EnumerablePropertySource<?> enumerable)) {
                continue;
            }
            boolean env = source instanceof SystemEnvironmentPropertySource;
            boolean unchecked =
                    env || StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(source.getName());
            for (String raw : enumerable.getPropertyNames()) {
                ConfigurationPropertyName name = adapt(raw, env);
                if (name == null
                        || name.getNumberOfElements() < 2
                        || !name.getElement(0, ConfigurationPropertyName.Form.UNIFORM)
                                .equals("hedge")
                        || !seen.add(source.getName() + "|" + raw)) {
                    continue;
                }
                Class<?> type = typeOf(name);
                if (type == null && unchecked) {
                    String nearest = nearest(name);
                    warnings.add((env ? "Environment variable " : "System property ") + raw
                            + " binds to no hedge property and is ignored"
                            + (nearest == null
                                    ? ""
                                    : "; did you mean " + (env ? envForm(nearest) + " (" + nearest + ")" : nearest)
                                            + "?")
                            + (env && nearest == null
                                    ? " (an instance name with a dash cannot be written in an environment variable;"
                                            + " use SPRING_APPLICATION_JSON for it)"
                                    : ""));
                } else if (type == Duration.class) {
                    Object value = source.getProperty(raw);
                    if (value instanceof Number
                            || (value instanceof String text && text.trim().matches("-?[0-9]+"))) {
                        warnings.add(raw + "=" + value + " (" + source.getName() + ") has no unit, so it is read as "
                                + value.toString().trim() + " ms; write "
                                + value.toString().trim()
                                + "ms to keep that, or give the unit you meant (s, m)");
                    }
                }
            }
        }
        return warnings;
    }

    private static ConfigurationPropertyName adapt(String raw, boolean env) {
        try {
            if (env) {
                return ConfigurationPropertyName.adapt(
                        raw.toLowerCase(Locale.ROOT).replace('_', '.'), '.');
            }
            return ConfigurationPropertyName.adapt(raw, '.');
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** A kebab-case name as an environment variable: HEDGE_INSTANCES_USERS_MAXEXTRALOAD. */
    private static String envForm(String name) {
        return name.replace("-", "").replace('.', '_').toUpperCase(Locale.ROOT);
    }

    private static boolean isNested(Class<?> t) {
        return t.getEnclosingClass() == HedgeProperties.class && !t.isEnum();
    }

    private static String kebab(String camel) {
        StringBuilder sb = new StringBuilder();
        for (char c : camel.toCharArray()) {
            if (Character.isUpperCase(c)) {
                sb.append('-').append(Character.toLowerCase(c));
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}

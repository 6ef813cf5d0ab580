package io.github.hedge.spring.internal;

/**
 * The Levenshtein distance between two names, for "did you mean" suggestions at start-up. Not part
 * of the public API: it may change without notice. Stateless, so thread-safe.
 */
public final class EditDistance {
    private EditDistance() {}

    /**
     * @param a one name
     * @param b the other
     * @return the fewest single-character insertions, deletions and substitutions that turn
     *     {@code a} into {@code b}
     */
    public static int between(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}

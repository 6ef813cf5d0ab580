package io.github.hedge.core.spi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * The rule adapters that place attempts follow when they keep slow targets away from first
 * attempts (the gRPC balancer's rotation, the Cassandra session's plans, the HTTP clients'
 * placement over a service's instances): <b>at most half the
 * targets, rounded down, are set apart at once</b>. One target of two, one of three, two of five.
 *
 * <p>Why a cap: the tests that find slow targets ({@link StallingTargets}, a median against the
 * peers') judge each target against the others. While a cold client's first answers or a short
 * pause make two of three targets look slow, setting both apart would send every first attempt to
 * the last one, a load no target was sized for, and that target may be the one that stalls. The
 * targets set apart first stay apart; a new candidate joins only while there is room, the worst
 * first by the adapter's own ranking.
 *
 * <p>Stateless and thread-safe: the adapter keeps who is apart and for how long.
 */
public final class SetApart {
    private SetApart() {}

    /**
     * @param targets how many targets there are, at least 0
     * @return how many of them may be set apart at once: {@code targets / 2}, rounded down
     * @throws IllegalArgumentException if {@code targets} is negative
     */
    public static int room(int targets) {
        if (targets < 0) {
            throw new IllegalArgumentException("targets must be >= 0, was " + targets);
        }
        return targets / 2;
    }

    /**
     * Which candidates join the targets already set apart, by the rule in the class comment.
     *
     * @param apart the targets set apart now; they stay apart and take room first
     * @param candidatesWorstFirst targets found slow now, the worst first; those already apart are
     *     skipped
     * @param targets how many targets there are in all, at least 0
     * @param <K> the target type, with value equality
     * @return the candidates to set apart in addition, in the given order: at most {@code
     *     room(targets) - apart.size()} of them, none when there is no room; a new list
     * @throws IllegalArgumentException if {@code targets} is negative
     */
    public static <K> List<K> join(Collection<K> apart, List<K> candidatesWorstFirst, int targets) {
        Objects.requireNonNull(apart, "apart must not be null");
        Objects.requireNonNull(candidatesWorstFirst, "candidatesWorstFirst must not be null");
        int free = room(targets) - apart.size();
        List<K> joined = new ArrayList<>(Math.max(0, Math.min(free, candidatesWorstFirst.size())));
        for (K k : candidatesWorstFirst) {
            if (joined.size() >= free) {
                break;
            }
            if (!apart.contains(k) && !joined.contains(k)) {
                joined.add(k);
            }
        }
        return joined;
    }
}

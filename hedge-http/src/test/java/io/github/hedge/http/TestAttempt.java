package io.github.hedge.http;

import io.github.hedge.core.AttemptContext;
import java.time.Duration;
import java.util.List;

/**
 * One attempt of a call, as the core would hand it to a chooser: its number and the targets the
 * call tried before it. Nothing else happens to it. For the choosers' unit tests.
 *
 * @param attemptNumber 1 for the primary, 2 for the first hedge
 * @param triedTargets the targets of the call's earlier attempts
 */
public record TestAttempt(int attemptNumber, List<String> triedTargets) implements AttemptContext {
    @Override
    public void reportTarget(String target) {}

    @Override
    public void onCancel(Runnable hook) {}

    @Override
    public boolean isCancelled() {
        return false;
    }

    @Override
    public void pushback(Duration delay) {}

    @Override
    public void stopFurtherAttempts() {}
}

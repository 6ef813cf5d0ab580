package io.github.hedge.examples.spring;

import io.github.hedge.spring.annotation.Hedged;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;

/**
 * A read that is safe to repeat, hedged through the {@code users} instance ({@code
 * hedge.instances.users.*} in application.properties). Each attempt calls the method again; here the
 * first invocation of every call stands for a slow replica (2 s) and later ones answer in 5 ms, so a
 * hedge wins. Thread-safe.
 */
@Service
public class UserService {
    private final AtomicInteger invocations = new AtomicInteger();
    private final ScheduledExecutorService replica = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "replica");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param id the user id
     * @return the user's name, from whichever attempt answered first
     */
    @Hedged("users")
    public CompletionStage<String> find(String id) {
        int n = invocations.incrementAndGet();
        long delayMillis = n % 2 == 1 ? 2_000 : 5; // odd invocations: the slow replica
        CompletableFuture<String> answer = new CompletableFuture<>();
        replica.schedule(
                () -> answer.complete("user-" + id + " (invocation " + n + ")"), delayMillis, TimeUnit.MILLISECONDS);
        return answer;
    }

    /** @return how many times {@link #find} ran, attempts included */
    public int invocations() {
        return invocations.get();
    }
}

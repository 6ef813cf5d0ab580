package io.github.hedge.examples.spring;

import io.github.hedge.spring.annotation.Hedged;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;

/**
 * Places orders: a write that must not run twice. It goes through the {@code orders} instance like
 * any hedged method, but neither the annotation nor {@code hedge.instances.orders.idempotent} marks
 * it idempotent, so each call runs exactly once, however slow (counted as {@code
 * notHedgedNonIdempotent} in the {@code hedges} endpoint). Thread-safe.
 */
@Service
public class OrderService {
    private final AtomicInteger invocations = new AtomicInteger();

    /**
     * @param productId what to order
     * @return a confirmation
     * @throws InterruptedException if interrupted while the simulated backend works (100 ms)
     */
    @Hedged("orders")
    public String place(String productId) throws InterruptedException {
        invocations.incrementAndGet();
        Thread.sleep(100);
        return "ordered " + productId;
    }

    /** @return how many times {@link #place} ran */
    public int invocations() {
        return invocations.get();
    }
}

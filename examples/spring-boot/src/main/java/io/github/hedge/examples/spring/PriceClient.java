package io.github.hedge.examples.spring;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

/**
 * Reads prices from the prices service over gRPC, through the channel {@link
 * HedgedApplication#pricesChannel} builds: hedge's interceptor hedges {@code shop.Prices/Get} as
 * {@code hedge.grpc.methods[shop.Prices/Get].*} says, and its executor is listed in the {@code
 * hedges} endpoint as {@code grpc:shop.Prices/Get}. Thread-safe.
 */
@Component
public class PriceClient {
    private final ManagedChannel channel;

    PriceClient(ManagedChannel pricesChannel) {
        this.channel = pricesChannel;
    }

    /**
     * @param productId the product
     * @return its price, from whichever attempt answered first
     */
    public String price(String productId) {
        return ClientCalls.blockingUnaryCall(
                channel, Prices.GET, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), productId);
    }
}

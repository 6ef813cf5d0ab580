package io.github.hedge.examples.spring;

import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Reads stock levels from the inventory service over HTTP, with a {@code RestClient} and a {@code
 * WebClient} built from Spring Boot's own builders. The starter hedges both: {@code
 * hedge.http.clients.inventory.instances} lists the service's instances, so a request to {@code
 * http://inventory/...} goes to one of them and its hedge to another. Its executor is the hedge
 * instance {@code inventory}. Thread-safe.
 */
@Component
public class InventoryClient {
    private final RestClient rest;
    private final WebClient web;

    InventoryClient(RestClient.Builder rest, WebClient.Builder web) {
        this.rest = rest.baseUrl("http://inventory").build();
        this.web = web.baseUrl("http://inventory").build();
    }

    /**
     * @param productId the product
     * @return its stock, from whichever attempt answered first (blocking)
     */
    public String stock(String productId) {
        return rest.get().uri("/stock/{id}", productId).retrieve().body(String.class);
    }

    /**
     * @param productId the product
     * @return its stock, from whichever attempt answered first
     */
    public Mono<String> stockReactive(String productId) {
        return web.get().uri("/stock/{id}", productId).retrieve().bodyToMono(String.class);
    }
}

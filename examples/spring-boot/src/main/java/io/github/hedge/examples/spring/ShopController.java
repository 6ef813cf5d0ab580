package io.github.hedge.examples.spring;

import java.util.concurrent.CompletionStage;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * The HTTP API: {@code GET /users/{id}} (a hedged call to a slow simulated backend), {@code POST
 * /orders/{productId}} (a write, never hedged) and {@code GET /products/{id}} (a Cassandra read and
 * a gRPC call, both hedged by the auto-configuration alone), {@code GET /stock/{id}} and {@code GET
 * /stock-reactive/{id}} (HTTP calls to the inventory service through a hedged {@code RestClient} and
 * {@code WebClient}).
 */
@RestController
public class ShopController {
    private final UserService users;
    private final OrderService orders;
    private final ProductRepository products;
    private final PriceClient prices;
    private final InventoryClient inventory;

    ShopController(
            UserService users,
            OrderService orders,
            ProductRepository products,
            PriceClient prices,
            InventoryClient inventory) {
        this.users = users;
        this.orders = orders;
        this.products = products;
        this.prices = prices;
        this.inventory = inventory;
    }

    /**
     * @param id a product id
     * @return its stock, read over HTTP with a hedged {@code RestClient}
     */
    @GetMapping("/stock/{id}")
    public String stock(@PathVariable("id") String id) {
        return inventory.stock(id);
    }

    /**
     * @param id a product id
     * @return its stock, read over HTTP with a hedged {@code WebClient}
     */
    @GetMapping("/stock-reactive/{id}")
    public Mono<String> stockReactive(@PathVariable("id") String id) {
        return inventory.stockReactive(id);
    }

    /**
     * @param id a user id
     * @return the user, answered asynchronously
     */
    @GetMapping("/users/{id}")
    public CompletionStage<String> user(@PathVariable("id") String id) {
        return users.find(id);
    }

    /**
     * @param productId what to order
     * @return a confirmation
     * @throws InterruptedException if the request thread is interrupted
     */
    @PostMapping("/orders/{productId}")
    public String order(@PathVariable("productId") String productId) throws InterruptedException {
        return orders.place(productId);
    }

    /**
     * @param id a product id
     * @return "name: price", or 404 if Cassandra has no such product
     */
    @GetMapping("/products/{id}")
    public ResponseEntity<String> product(@PathVariable("id") String id) {
        return products.name(id)
                .map(name -> ResponseEntity.ok(name + ": " + prices.price(id)))
                .orElseGet(() -> ResponseEntity.notFound().build());
    }
}

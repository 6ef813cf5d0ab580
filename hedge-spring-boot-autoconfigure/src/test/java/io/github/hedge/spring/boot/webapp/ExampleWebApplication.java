package io.github.hedge.spring.boot.webapp;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.github.hedge.spring.annotation.Hedged;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Repository;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The example application, as a test fixture: a web app whose service reads a slow
 * simulated backend through an {@code @Hedged} method, writes through a method that is not
 * idempotent, and reads Cassandra through the auto-configured (hedged) session.
 */
@SpringBootApplication
public class ExampleWebApplication {
    /** A backend whose odd-numbered invocations answer after 800 ms and even ones at once. */
    @Service
    public static class SlowBackend {
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger writes = new AtomicInteger();

        String read(String id) throws InterruptedException {
            int n = reads.incrementAndGet();
            if (n % 2 == 1) {
                Thread.sleep(800);
            }
            return "item-" + id + " (invocation " + n + ")";
        }

        String write(String id) throws InterruptedException {
            writes.incrementAndGet();
            Thread.sleep(100);
            return "ordered " + id;
        }
    }

    /** Reads through hedge instance {@code backend} (idempotent), writes through {@code orders} (not). */
    @Service
    public static class ItemService {
        private final SlowBackend backend;

        ItemService(SlowBackend backend) {
            this.backend = backend;
        }

        @Hedged("backend")
        public String item(String id) throws InterruptedException {
            return backend.read(id);
        }

        @Hedged("orders")
        public String order(String id) throws InterruptedException {
            return backend.write(id);
        }
    }

    /** A repository on the CqlSession bean Spring Boot builds and hedge wraps. */
    @Repository
    public static class UserRepository {
        private final CqlSession session;

        UserRepository(CqlSession session) {
            this.session = session;
        }

        String find() {
            Row row = session.execute(SimpleStatement.newInstance("SELECT v FROM ks.t WHERE k = 1")
                            .setIdempotent(true))
                    .one();
            return row == null ? "none" : row.getFormattedContents();
        }
    }

    /** The HTTP API. */
    @RestController
    public static class Api {
        private final ItemService items;
        private final UserRepository users;

        Api(ItemService items, UserRepository users) {
            this.items = items;
            this.users = users;
        }

        @GetMapping("/items/{id}")
        String item(@PathVariable String id) throws InterruptedException {
            return items.item(id);
        }

        @PostMapping("/orders/{id}")
        String order(@PathVariable String id) throws InterruptedException {
            return items.order(id);
        }

        @GetMapping("/users/1")
        String user() {
            return users.find();
        }
    }
}

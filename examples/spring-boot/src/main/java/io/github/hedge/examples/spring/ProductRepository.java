package io.github.hedge.examples.spring;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.util.Optional;
import org.springframework.stereotype.Repository;

/**
 * Reads products from Cassandra through the {@link CqlSession} bean Spring Boot builds from {@code
 * spring.cassandra.*}, which hedge wraps ({@code hedge.cassandra.mode=wrapped}, the default): a read
 * marked idempotent is hedged to another replica when its first one is slow; nothing here knows.
 * Thread-safe.
 */
@Repository
public class ProductRepository {
    static final String SELECT_NAME = "SELECT name FROM shop.products WHERE id = ?";

    private final CqlSession session;

    ProductRepository(CqlSession session) {
        this.session = session;
    }

    /**
     * @param id the product id
     * @return its name, if the product exists
     */
    public Optional<String> name(String id) {
        Row row = session.execute(SimpleStatement.newInstance(SELECT_NAME, id).setIdempotent(true))
                .one();
        return Optional.ofNullable(row).map(r -> r.getString("name"));
    }
}

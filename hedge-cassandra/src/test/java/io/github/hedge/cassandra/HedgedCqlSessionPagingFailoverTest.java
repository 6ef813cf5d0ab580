package io.github.hedge.cassandra;

import static io.github.hedge.cassandra.SimulacronCluster.PAGED;
import static io.github.hedge.cassandra.SimulacronCluster.paged;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.simulacron.common.stubbing.CloseType;
import com.datastax.oss.simulacron.server.BoundNode;
import com.datastax.oss.simulacron.server.RejectScope;
import io.github.hedge.core.DelayPolicy;
import io.github.hedge.core.HedgeBudget;
import io.github.hedge.core.HedgeConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Later pages of a hedged statement when the node that answered the first page goes down: its own
 * simulated cluster, since a node is taken down.
 */
class HedgedCqlSessionPagingFailoverTest {
    private SimulacronCluster sim;
    private CqlSession driver;

    @BeforeEach
    void start() {
        sim = new SimulacronCluster(3);
        sim.primeTwoPages(0);
        driver = sim.session();
    }

    @AfterEach
    void stop() {
        driver.close();
        sim.close();
    }

    private HedgedCqlSession wrap() {
        return HedgedCqlSession.builder(driver)
                .hedgeConfig(HedgeConfig.builder()
                        .delay(DelayPolicy.fixed(Duration.ofSeconds(2)))
                        .budget(HedgeBudget.unlimited())
                        .build())
                .latencyAware(LatencyAwareOptions.disabled())
                .build();
    }

    /** Takes the node down: it refuses new connections and drops those it has, until the driver has none. */
    private BoundNode takeDown(Node node) throws Exception {
        BoundNode down = sim.node(sim.indexOf(node));
        down.rejectConnectionsAsync(0, RejectScope.STOP).toCompletableFuture().get(10, TimeUnit.SECONDS);
        down.closeConnectionsAsync(CloseType.DISCONNECT).toCompletableFuture().get(10, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(10)).until(() -> node.getOpenConnections() == 0);
        return down;
    }

    /** @return the nodes that received a request for a later page (one with a paging state) */
    private List<Integer> laterPageReceivers() {
        return sim.receptions(PAGED).stream()
                .filter(SimulacronCluster.Reception::laterPage)
                .map(SimulacronCluster.Reception::node)
                .collect(Collectors.toList());
    }

    @Test
    void should_fetch_the_next_page_through_another_node_when_the_first_page_node_is_down() throws Exception {
        HedgedCqlSession session = wrap();
        AsyncResultSet first =
                session.executeAsync(paged(1)).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(first.one().getInt("v")).isEqualTo(1);
        int firstNode = sim.indexOf(first.getExecutionInfo().getCoordinator());
        takeDown(first.getExecutionInfo().getCoordinator());

        AsyncResultSet second = first.fetchNextPage().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(second.one().getInt("v")).isEqualTo(2);
        assertThat(laterPageReceivers()).singleElement().isNotEqualTo(firstNode);
    }

    @Test
    void should_iterate_every_row_when_the_first_page_node_goes_down_between_pages() throws Exception {
        HedgedCqlSession session = wrap();
        ResultSet rs = session.execute(paged(2));
        List<Integer> values = new ArrayList<>();
        Row row = rs.one();
        values.add(row.getInt("v"));
        int firstNode = sim.indexOf(rs.getExecutionInfo().getCoordinator());
        takeDown(rs.getExecutionInfo().getCoordinator());

        rs.forEach(r -> values.add(r.getInt("v"))); // the second page is fetched here

        assertThat(values).containsExactly(1, 2);
        assertThat(laterPageReceivers()).singleElement().isNotEqualTo(firstNode);
    }
}

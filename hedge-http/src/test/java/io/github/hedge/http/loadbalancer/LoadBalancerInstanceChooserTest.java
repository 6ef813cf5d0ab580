package io.github.hedge.http.loadbalancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.core.testing.VirtualTimeScheduler;
import io.github.hedge.http.TestAttempt;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * Where the chooser sends a request, and how it reads a service's instances: a pure unit, in
 * virtual time, over a hand-written {@link ServiceInstanceListSupplier} (the one Spring Cloud's
 * factory would return). The placement rule itself is {@code PlacementTest}'s; a real application
 * is {@code HedgeHttpLoadBalancerTest}'s.
 */
class LoadBalancerInstanceChooserTest {
    private final VirtualTimeScheduler time = new VirtualTimeScheduler();
    private final Supplier inventory = new Supplier("inventory");
    private final Factory factory = new Factory(inventory);

    private LoadBalancerInstanceChooser chooser() {
        return LoadBalancerInstanceChooser.builder(factory)
                .serviceId("inventory")
                .ticker(time)
                .build();
    }

    private static ServiceInstance instance(String host) {
        return new DefaultServiceInstance(host, "inventory", host, 8080, false);
    }

    @Test
    void should_place_requests_round_robin_on_the_services_instances_when_the_uri_names_the_service() {
        inventory.list = List.of(instance("a"), instance("b"));
        LoadBalancerInstanceChooser chooser = chooser();

        List<URI> placed = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            placed.add(chooser.choose(URI.create("lb://inventory/stock"), new TestAttempt(1, List.of())));
        }

        assertThat(placed)
                .containsExactly(
                        URI.create("http://a:8080"),
                        URI.create("http://b:8080"),
                        URI.create("http://a:8080"),
                        URI.create("http://b:8080"));
        assertThat(chooser.instances("inventory")).containsExactly("a:8080", "b:8080");
    }

    @Test
    void should_place_a_request_to_a_named_service_id_whatever_its_case_and_leave_other_hosts_unchanged() {
        inventory.list = List.of(instance("a"));
        LoadBalancerInstanceChooser chooser = chooser();

        assertThat(chooser.choose(URI.create("http://inventory/stock"), new TestAttempt(1, List.of())))
                .isEqualTo(URI.create("http://a:8080"));
        assertThat(chooser.choose(URI.create("https://INVENTORY/stock"), new TestAttempt(1, List.of())))
                .isEqualTo(URI.create("http://a:8080"));
        assertThat(chooser.choose(URI.create("http://example.com/stock"), new TestAttempt(1, List.of())))
                .isNull();
        assertThat(factory.asked).doesNotContain("example.com");
    }

    @Test
    void should_send_a_hedge_to_an_instance_the_call_has_not_tried_when_one_is_left() {
        inventory.list = List.of(instance("a"), instance("b"), instance("c"));
        LoadBalancerInstanceChooser chooser = chooser();

        for (int i = 0; i < 9; i++) {
            String tried = List.of("a:8080", "b:8080", "c:8080").get(i % 3);
            URI hedge = chooser.choose(URI.create("lb://inventory/stock"), new TestAttempt(2, List.of(tried)));
            assertThat(hedge.getHost() + ":" + hedge.getPort()).isNotEqualTo(tried);
        }
    }

    @Test
    void should_read_the_instance_list_at_most_once_per_refresh_interval_and_use_the_new_one_after_it() {
        inventory.list = List.of(instance("a"), instance("b"));
        LoadBalancerInstanceChooser chooser = chooser();
        for (int i = 0; i < 100; i++) {
            chooser.choose(URI.create("lb://inventory/stock"), new TestAttempt(1, List.of()));
        }
        assertThat(inventory.reads).hasValue(1);

        inventory.list = List.of(instance("b"), instance("c"));
        time.advance(Duration.ofSeconds(1));
        List<String> placed = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            placed.add(chooser.choose(URI.create("lb://inventory/stock"), new TestAttempt(1, List.of()))
                    .getHost());
        }

        assertThat(inventory.reads).hasValue(2);
        assertThat(placed).containsOnly("b", "c");
        assertThat(chooser.instances("inventory")).containsExactly("b:8080", "c:8080");
    }

    @Test
    void should_send_requests_unchanged_until_the_first_instance_list_arrives() {
        Sinks.Many<List<ServiceInstance>> later = Sinks.many().replay().latest();
        inventory.source = later.asFlux();
        LoadBalancerInstanceChooser chooser = chooser();

        assertThat(chooser.choose(URI.create("lb://inventory/stock"), new TestAttempt(1, List.of())))
                .isNull();
        later.tryEmitNext(List.of(instance("a")));

        assertThat(chooser.choose(URI.create("lb://inventory/stock"), new TestAttempt(1, List.of())))
                .isEqualTo(URI.create("http://a:8080"));
    }

    @Test
    void should_keep_the_last_instance_list_when_a_later_read_fails() {
        inventory.list = List.of(instance("a"));
        LoadBalancerInstanceChooser chooser = chooser();
        chooser.choose(URI.create("lb://inventory/stock"), new TestAttempt(1, List.of()));

        inventory.source = Flux.error(new IllegalStateException("registry down"));
        time.advance(Duration.ofSeconds(1));

        assertThat(chooser.choose(URI.create("lb://inventory/stock"), new TestAttempt(1, List.of())))
                .isEqualTo(URI.create("http://a:8080"));
        assertThat(inventory.reads).hasValue(2);
    }

    @Test
    void should_send_requests_unchanged_when_the_service_has_no_instance_list_supplier() {
        LoadBalancerInstanceChooser chooser =
                LoadBalancerInstanceChooser.builder(factory).ticker(time).build();

        assertThat(chooser.choose(URI.create("lb://billing/invoice"), new TestAttempt(1, List.of())))
                .isNull();
        assertThat(chooser.instances("billing")).isEmpty();
    }

    @Test
    void should_name_the_setting_its_range_and_the_value_when_a_refresh_interval_is_out_of_range() {
        assertThatThrownBy(() -> LoadBalancerInstanceChooser.builder(factory).refresh(Duration.ofMillis(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("refresh must be in [10ms, 1h], was PT0.005S");
        assertThatThrownBy(() -> LoadBalancerInstanceChooser.builder(factory).serviceId(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("serviceId must not be blank, was \" \"");
    }

    /** A service's instance list: {@link #list}, or {@link #source} when set; counts its reads. */
    private static final class Supplier implements ServiceInstanceListSupplier {
        private final String serviceId;
        final AtomicInteger reads = new AtomicInteger();
        volatile List<ServiceInstance> list = List.of();
        volatile Flux<List<ServiceInstance>> source;

        Supplier(String serviceId) {
            this.serviceId = serviceId;
        }

        @Override
        public String getServiceId() {
            return serviceId;
        }

        @Override
        public Flux<List<ServiceInstance>> get() {
            return Flux.defer(() -> {
                reads.incrementAndGet();
                Flux<List<ServiceInstance>> s = source;
                return s != null ? s : Flux.just(list);
            });
        }
    }

    /** Spring Cloud's factory, reduced to what the chooser asks of it: one service's supplier. */
    private static final class Factory implements ReactiveLoadBalancer.Factory<ServiceInstance> {
        private final Supplier supplier;
        final List<String> asked = new ArrayList<>();

        Factory(Supplier supplier) {
            this.supplier = supplier;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <X> Map<String, X> getInstances(String name, Class<X> type) {
            asked.add(name);
            return name.equalsIgnoreCase(supplier.getServiceId()) ? Map.of("supplier", (X) supplier) : Map.of();
        }

        @Override
        public ReactiveLoadBalancer<ServiceInstance> getInstance(String serviceId) {
            throw new UnsupportedOperationException("the chooser places requests itself");
        }

        @Override
        public <X> X getInstance(String name, Class<?> clazz, Class<?>... generics) {
            throw new UnsupportedOperationException("the chooser reads suppliers only");
        }
    }
}

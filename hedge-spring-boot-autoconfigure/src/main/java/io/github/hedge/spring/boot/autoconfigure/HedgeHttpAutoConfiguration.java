package io.github.hedge.spring.boot.autoconfigure;

import io.github.hedge.http.HedgingClientHttpRequestInterceptor;
import io.github.hedge.http.HedgingExchangeFilterFunction;
import io.github.hedge.http.InstanceChooser;
import io.github.hedge.http.loadbalancer.LoadBalancerInstanceChooser;
import io.github.hedge.reactor.HedgedMono;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.client.RestClientCustomizer;
import org.springframework.boot.web.client.RestTemplateCustomizer;
import org.springframework.boot.web.reactive.function.client.WebClientCustomizer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;

/**
 * With hedge-http on the class path: a {@link HedgeHttpClients} bean from {@code hedge.http.*}, and
 * customizers that add its hedging to Spring Boot's auto-configured builders: the {@code
 * RestClient.Builder} and {@code RestTemplateBuilder} get its interceptor, the {@code
 * WebClient.Builder} (with spring-webflux and hedge-reactor) its filter. The customizers run last
 * ({@link Ordered#LOWEST_PRECEDENCE}), so the hedging is the last interceptor or filter, as it must
 * be. With Micrometer, {@code hedge.http.requests.too.large} (function counter, tag {@code name},
 * the hedge instance) counts requests not hedged because their body was over the limit. With Spring
 * Cloud LoadBalancer (a {@code LoadBalancerClientFactory} bean), listed clients without {@code
 * instances}, and {@code lb://} requests, are placed on the instances it knows for the service id.
 *
 * <p>{@code hedge.http.enabled=false} turns it all off; each bean backs off when the application
 * defines its own.
 */
@AutoConfiguration(
        after = HedgeAutoConfiguration.class,
        afterName = "org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration")
@ConditionalOnClass(HedgingClientHttpRequestInterceptor.class)
@ConditionalOnBean(HedgeInstances.class)
@ConditionalOnProperty(prefix = "hedge.http", name = "enabled", havingValue = "true", matchIfMissing = true)
public class HedgeHttpAutoConfiguration {
    /** Created by Spring. */
    public HedgeHttpAutoConfiguration() {}

    /**
     * @param properties the {@code hedge.*} properties
     * @param instances the named instances whose executors run the requests
     * @return the clients
     * @throws InvalidHedgePropertyException naming the first invalid {@code hedge.http.*} value
     */
    @Bean
    @ConditionalOnMissingBean
    public HedgeHttpClients hedgeHttpClients(
            HedgeProperties properties,
            HedgeInstances instances,
            @Qualifier(SERVICE_CHOOSER) ObjectProvider<InstanceChooser> services) {
        return new HedgeHttpClients(properties, instances, services.getIfAvailable());
    }

    /** The name of the bean that places attempts on Spring Cloud LoadBalancer's instances. */
    public static final String SERVICE_CHOOSER = "hedgeLoadBalancerInstanceChooser";

    /**
     * With Spring Cloud LoadBalancer: listed clients without {@code instances} (their name is the
     * service id), and {@code lb://} requests, are placed on the instances its suppliers list, a hedge
     * on one the call has not tried.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer",
                "org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier"
            })
    @ConditionalOnBean(type = "org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory")
    static class LoadBalancerPlacement {
        @Bean(SERVICE_CHOOSER)
        @ConditionalOnMissingBean(name = SERVICE_CHOOSER)
        LoadBalancerInstanceChooser hedgeLoadBalancerInstanceChooser(
                LoadBalancerClientFactory factory, HedgeProperties properties) {
            LoadBalancerInstanceChooser.Builder b = LoadBalancerInstanceChooser.builder(factory);
            serviceIds(properties).forEach(b::serviceId);
            return b.build();
        }

        /** Reads the listed services' instance lists once every singleton exists, before the first request. */
        @Bean
        SmartInitializingSingleton hedgeLoadBalancerPrefetch(
                ObjectProvider<LoadBalancerInstanceChooser> chooser, HedgeProperties properties) {
            return () -> chooser.ifAvailable(c -> c.prefetch(serviceIds(properties)));
        }

        private static List<String> serviceIds(HedgeProperties properties) {
            List<String> ids = new ArrayList<>();
            properties.getHttp().getClients().forEach((name, c) -> {
                if (c.getInstances().isEmpty()) {
                    ids.add(name);
                }
            });
            return ids;
        }
    }

    /**
     * @param clients the clients
     * @return adds the hedging interceptor to every RestClient.Builder Spring Boot builds, last
     */
    @Bean
    @Order(Ordered.LOWEST_PRECEDENCE)
    @ConditionalOnClass(name = "org.springframework.web.client.RestClient")
    @ConditionalOnMissingBean(name = "hedgeRestClientCustomizer")
    public RestClientCustomizer hedgeRestClientCustomizer(HedgeHttpClients clients) {
        return builder -> builder.requestInterceptors(list -> list.add(clients.requestInterceptor()));
    }

    /**
     * @param clients the clients
     * @return adds the hedging interceptor to every RestTemplate built by Spring Boot's builder, last
     */
    @Bean
    @Order(Ordered.LOWEST_PRECEDENCE)
    @ConditionalOnClass(name = "org.springframework.web.client.RestTemplate")
    @ConditionalOnMissingBean(name = "hedgeRestTemplateCustomizer")
    public RestTemplateCustomizer hedgeRestTemplateCustomizer(HedgeHttpClients clients) {
        return template -> template.getInterceptors().add(clients.requestInterceptor());
    }

    /** The WebClient filter, when spring-webflux and hedge-reactor are present. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ExchangeFilterFunction.class, HedgingExchangeFilterFunction.class, HedgedMono.class})
    static class WebClientHedging {
        @Bean
        @Order(Ordered.LOWEST_PRECEDENCE)
        @ConditionalOnMissingBean(name = "hedgeWebClientCustomizer")
        WebClientCustomizer hedgeWebClientCustomizer(HedgeHttpClients clients) {
            ExchangeFilterFunction filter = exchangeFilter(clients);
            return builder -> builder.filters(list -> list.add(filter));
        }

        /**
         * @param clients the clients
         * @return a filter that hands each request to its client's {@link HedgingExchangeFilterFunction}
         *     (or lets it through when the client is disabled)
         */
        static ExchangeFilterFunction exchangeFilter(HedgeHttpClients clients) {
            Map<String, HedgingExchangeFilterFunction> filters = new LinkedHashMap<>();
            for (HedgeHttpClients.Client c : clients.clients().values()) {
                filters.put(c.name(), filter(clients, c));
            }
            HedgingExchangeFilterFunction fallback = filter(clients, clients.fallback());
            return (request, next) -> {
                HedgeHttpClients.Client c = clients.clientFor(request.url());
                if (!c.enabled()) {
                    return next.exchange(request);
                }
                HedgingExchangeFilterFunction f = c == clients.fallback() ? fallback : filters.get(c.name());
                return f.filter(request, next);
            };
        }

        private static HedgingExchangeFilterFunction filter(HedgeHttpClients clients, HedgeHttpClients.Client c) {
            HedgeInstances instances = clients.instances();
            HedgingExchangeFilterFunction f =
                    HedgingExchangeFilterFunction.of(() -> instances.executor(c.instance()), c.policy(), c.chooser());
            clients.countTooLarge(c.instance(), f::requestsTooLarge);
            return f;
        }
    }

    /** {@code hedge.http.requests.too.large}, with Micrometer. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {
        @Bean
        MeterBinder hedgeHttpMetrics(HedgeHttpClients clients) {
            return registry -> {
                for (String name : clients.requestsTooLarge().keySet()) {
                    FunctionCounter.builder("hedge.http.requests.too.large", clients, c -> c.requestsTooLarge()
                                    .getOrDefault(name, 0L))
                            .description(
                                    "HTTP requests not hedged because their body was over max-hedged-request-bytes")
                            .baseUnit("requests")
                            .tag("name", name)
                            .register(registry);
                }
            };
        }
    }
}

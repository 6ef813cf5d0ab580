/**
 * Hedged HTTP calls for Spring's clients: {@link io.github.hedge.http.HedgingExchangeFilterFunction}
 * for {@code WebClient}, {@link io.github.hedge.http.HedgingClientHttpRequestInterceptor} for {@code
 * RestClient} and {@code RestTemplate}. Both run each request as a call of a hedge-core {@link
 * io.github.hedge.core.HedgedExecutor}, so calls publish the executor's events, metrics and
 * observations. {@link io.github.hedge.http.HttpHedgePolicy} says which requests may be hedged and
 * which statuses are failures; an {@link io.github.hedge.http.InstanceChooser} places each attempt on
 * an instance of the service.
 *
 * <p>This is a module of its own rather than a package of the Spring Boot starter because of what it
 * pulls in: it needs spring-web (and, for {@code WebClient}, spring-webflux and hedge-reactor), which
 * an application hedging only gRPC or Cassandra calls should not get, and it needs no Spring Boot.
 */
package io.github.hedge.http;

/**
 * A copyable Spring Boot web application hedged by properties and {@code @Hedged}: a slow simulated
 * backend, a write that is never hedged, a Cassandra repository on the auto-configured session and a
 * gRPC client, all listed by the {@code hedges} actuator endpoint.
 */
package io.github.hedge.examples.spring;

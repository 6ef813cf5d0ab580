/**
 * Spring Boot auto-configuration for hedge: the {@code hedge.*} properties ({@link
 * io.github.hedge.spring.boot.autoconfigure.HedgeProperties}), the named instances built from them
 * ({@link io.github.hedge.spring.boot.autoconfigure.HedgeInstances}), Micrometer binding and the
 * {@code hedges} actuator endpoint.
 */
package io.github.hedge.spring.boot.autoconfigure;

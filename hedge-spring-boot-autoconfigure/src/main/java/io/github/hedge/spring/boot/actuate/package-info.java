/** The {@code hedges} Spring Boot Actuator endpoint. */
package io.github.hedge.spring.boot.actuate;

/** A copyable Spring Boot application that hedges a bean method with {@code @Hedged} and {@code hedge.*} properties. */
package io.github.hedge.examples.spring;

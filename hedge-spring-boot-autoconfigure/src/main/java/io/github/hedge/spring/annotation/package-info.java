/** {@link io.github.hedge.spring.annotation.Hedged}: hedge a Spring bean method through a named instance. */
package io.github.hedge.spring.annotation;

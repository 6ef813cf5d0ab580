/** The Spring AOP advisor that runs {@code @Hedged} methods through hedge's executors. */
package io.github.hedge.spring.aop;

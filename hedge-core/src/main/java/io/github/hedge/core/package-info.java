/**
 * Hedged requests: {@link io.github.hedge.core.HedgedExecutor} runs one logical call as up to N attempts.
 */
package io.github.hedge.core;

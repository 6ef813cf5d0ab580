/** Copyable programs for hedge-core: {@code HedgedExecutor} in its async and blocking forms. */
package io.github.hedge.examples.core;

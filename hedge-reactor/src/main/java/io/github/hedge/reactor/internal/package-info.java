/** Internals of hedge-reactor: no class here is part of the public API. */
package io.github.hedge.reactor.internal;

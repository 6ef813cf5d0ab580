/** Helpers shared by the starter's packages; not part of the public API. */
package io.github.hedge.spring.internal;

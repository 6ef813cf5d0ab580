/**
 * Implementation details of hedge-core. Nothing here is part of the public API: types in this
 * package never appear in a public signature and may change in any release.
 */
package io.github.hedge.core.internal;

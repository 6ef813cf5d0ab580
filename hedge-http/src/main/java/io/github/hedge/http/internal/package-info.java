/** Internals of hedge-http; not an API, may change in any release. */
package io.github.hedge.http.internal;

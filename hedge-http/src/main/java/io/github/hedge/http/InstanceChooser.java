package io.github.hedge.http;

import io.github.hedge.core.AttemptContext;
import java.net.URI;

/**
 * Places each attempt of a hedged HTTP call on an instance of the service it calls. Without one, an
 * attempt goes to the request's own URI: a hedge then reaches another instance only if DNS, a proxy
 * or the connection pool sends it elsewhere, which nothing guarantees.
 *
 * <p>The rule hedge-grpc's balancer follows, and {@link StaticInstanceChooser} implements: a hedge
 * goes to an instance the call has not tried ({@link AttemptContext#triedTargets()}), and a primary
 * avoids an instance that stalls a share of its calls. An implementation reports the instance it
 * picked with {@link AttemptContext#reportTarget}, so later attempts see it as tried.
 *
 * <p>Called once per attempt, on the thread that starts it; implementations must be thread-safe and
 * must not block.
 */
@FunctionalInterface
public interface InstanceChooser {
    /**
     * @param requestUri the request's URI as the application wrote it ({@code http://users/api/1}, say)
     * @param attempt the attempt being placed
     * @return the base URI (scheme, host and port) of the instance this attempt goes to; the
     *     request's path and query are kept. {@code null} sends the request to {@code requestUri}
     *     unchanged (a host the chooser does not know).
     */
    URI choose(URI requestUri, AttemptContext attempt);

    /**
     * @param requestUri the request's URI
     * @param instance the base URI an attempt goes to
     * @return {@code requestUri} with the scheme, host and port of {@code instance}
     */
    static URI rewrite(URI requestUri, URI instance) {
        try {
            return new URI(
                    instance.getScheme(),
                    requestUri.getRawUserInfo() == null ? null : requestUri.getUserInfo(),
                    instance.getHost(),
                    instance.getPort(),
                    requestUri.getPath(),
                    requestUri.getQuery(),
                    requestUri.getFragment());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("cannot place the request on instance " + instance, e);
        }
    }
}

package io.github.hedge.http;

import io.github.hedge.core.AttemptContext;
import io.github.hedge.core.CallOptions;
import io.github.hedge.core.HedgedExecutor;
import io.github.hedge.core.event.NotHedged;
import io.github.hedge.http.internal.HttpErrors;
import io.github.hedge.http.internal.Produced;
import io.github.hedge.http.internal.StatusFailure;
import io.github.hedge.http.internal.TooLarge;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;

/**
 * Hedges {@code RestClient} and {@code RestTemplate} requests: {@code
 * RestClient.builder().requestInterceptor(interceptor)}. Each request is one call of a {@link
 * HedgedExecutor}, so it publishes the executor's events, metrics and observations.
 *
 * <ul>
 *   <li>Which requests may run more than once, and which statuses are failures, is the {@link
 *       HttpHedgePolicy}'s decision. A request that may not runs exactly once.
 *   <li>Each attempt runs on the executor's attempt executor ({@code HedgeConfig.attemptExecutor()});
 *       the caller's thread waits. An attempt wins when its response headers arrive with a status
 *       that is not a failure; the caller reads that response, headers and body. The other attempts
 *       are interrupted and responses they had are closed.
 *   <li>Whether an interrupted attempt stops at once depends on the request factory: the JDK
 *       HttpClient factory and Reactor Netty's cancel the exchange (the server sees the connection
 *       close); the Apache HttpClient and {@code HttpURLConnection} factories on platform threads read
 *       on until the response comes, then close it.
 *   <li>When every attempt failed, the caller gets the primary's response (a 503, say) or exception.
 *   <li>Interrupting the caller, or the executor's deadline, cancels every attempt. A transport
 *       timeout of an attempt (a read timeout) ends the call and cancels the other attempts.
 *   <li>Spring hands interceptors the whole body as bytes. A body longer than {@link
 *       HttpHedgePolicy#maxHedgedRequestBytes()} runs once, is counted in {@link #requestsTooLarge()} and is
 *       reported as {@code NotHedged} with reason {@code REQUEST_TOO_LARGE}.
 *   <li>With an {@link InstanceChooser}, each attempt goes to the instance it picks.
 * </ul>
 *
 * <p><b>It must be the last interceptor.</b> Spring's interceptor chain can run the interceptors after
 * this one only once per request: a hedge would skip them. Immutable and thread-safe.
 */
public final class HedgingClientHttpRequestInterceptor implements ClientHttpRequestInterceptor {
    private final Supplier<HedgedExecutor> executors;
    private final HttpHedgePolicy policy;
    private final InstanceChooser chooser;
    private final TooLarge tooLarge = new TooLarge();

    private HedgingClientHttpRequestInterceptor(
            Supplier<HedgedExecutor> executors, HttpHedgePolicy policy, InstanceChooser chooser) {
        this.executors = Objects.requireNonNull(executors, "executors must not be null");
        this.policy = Objects.requireNonNull(policy, "policy must not be null");
        this.chooser = chooser;
    }

    /**
     * @param executor the executor that runs the calls
     * @return an interceptor with {@link HttpHedgePolicy#defaults()} and no instance chooser
     */
    public static HedgingClientHttpRequestInterceptor of(HedgedExecutor executor) {
        Objects.requireNonNull(executor, "executor must not be null");
        return new HedgingClientHttpRequestInterceptor(() -> executor, HttpHedgePolicy.defaults(), null);
    }

    /**
     * @param executor the executor that runs the calls
     * @param policy which requests may be hedged, which statuses fail
     * @param chooser places each attempt on an instance, or null to send every attempt to the request's URI
     * @return the interceptor
     */
    public static HedgingClientHttpRequestInterceptor of(
            HedgedExecutor executor, HttpHedgePolicy policy, InstanceChooser chooser) {
        Objects.requireNonNull(executor, "executor must not be null");
        return new HedgingClientHttpRequestInterceptor(() -> executor, policy, chooser);
    }

    /**
     * Like {@link #of(HedgedExecutor, HttpHedgePolicy, InstanceChooser)}, with the executor looked
     * up for each request, so that one replaced in a {@code HedgedExecutorRegistry} takes effect for
     * the next request.
     *
     * @param executors returns the executor for a request; called once per request, must not block
     * @param policy which requests may be hedged, which statuses fail
     * @param chooser places each attempt on an instance, or null
     * @return the interceptor
     */
    public static HedgingClientHttpRequestInterceptor of(
            Supplier<HedgedExecutor> executors, HttpHedgePolicy policy, InstanceChooser chooser) {
        return new HedgingClientHttpRequestInterceptor(executors, policy, chooser);
    }

    /** @return the executor requests run on now */
    public HedgedExecutor executor() {
        return executors.get();
    }

    /** @return requests not hedged because their body was over the limit, since creation */
    public long requestsTooLarge() {
        return tooLarge.sum();
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        HedgedExecutor executor = executors.get();
        boolean idempotent = policy.isIdempotent(
                request.getMethod(), request.getURI().getRawPath(), request.getHeaders(), request.getAttributes());
        // over the limit: the call runs once, reported as REQUEST_TOO_LARGE
        boolean overLimit = idempotent && body.length > policy.maxHedgedRequestBytes();
        if (overLimit) {
            tooLarge.record(executor.name(), policy.maxHedgedRequestBytes());
        }
        CallOptions options = CallOptions.builder()
                .idempotent(idempotent)
                .operation(request.getMethod().name())
                .errorClassifier(HttpErrors.INSTANCE)
                .build();
        Executor threads = executor.config().attemptExecutor();
        Produced<ClientHttpResponse> produced = new Produced<>(ClientHttpResponse::close);
        CompletableFuture<ClientHttpResponse> call = executor.executeAsync(options, attempt -> {
            if (overLimit) {
                attempt.stopFurtherAttempts(NotHedged.Reason.REQUEST_TOO_LARGE);
            }
            return start(attempt, request, body, execution, threads, produced);
        });
        ClientHttpResponse response = null;
        try {
            response = call.get();
            return response;
        } catch (InterruptedException e) {
            call.cancel(true);
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a hedged HTTP call");
        } catch (ExecutionException e) {
            Throwable cause =
                    e.getCause() instanceof CompletionException c && c.getCause() != null ? c.getCause() : e.getCause();
            if (cause instanceof StatusFailure f) {
                response = (ClientHttpResponse) f.response();
                return response;
            }
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IOException(cause);
        } catch (CancellationException e) {
            throw new InterruptedIOException("the hedged HTTP call was cancelled");
        } finally {
            produced.settle(response);
        }
    }

    private CompletableFuture<ClientHttpResponse> start(
            AttemptContext attempt,
            HttpRequest request,
            byte[] body,
            ClientHttpRequestExecution execution,
            Executor threads,
            Produced<ClientHttpResponse> produced) {
        URI instance = chooser == null ? null : chooser.choose(request.getURI(), attempt);
        HttpRequest placed =
                instance == null ? request : new Placed(request, InstanceChooser.rewrite(request.getURI(), instance));
        Running running = new Running();
        attempt.onCancel(running::cancel);
        threads.execute(() -> running.run(() -> {
            ClientHttpResponse response = execution.execute(placed, body);
            produced.add(response);
            int status = response.getStatusCode().value();
            if (policy.isFailure(status)) {
                throw new StatusFailure(status, policy.isRetryable(status), response);
            }
            return response;
        }));
        return running.result;
    }

    /** One attempt on a thread of its own; cancelling it interrupts that thread. */
    private static final class Running {
        final CompletableFuture<ClientHttpResponse> result = new CompletableFuture<>();
        private Thread thread;
        private boolean cancelled;

        interface Body {
            ClientHttpResponse call() throws IOException;
        }

        void run(Body body) {
            synchronized (this) {
                if (cancelled) {
                    return;
                }
                thread = Thread.currentThread();
            }
            try {
                result.complete(body.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            } finally {
                synchronized (this) {
                    thread = null;
                    Thread.interrupted(); // an interrupt aimed at this attempt must not reach the next task
                }
            }
        }

        void cancel() {
            result.cancel(false);
            synchronized (this) {
                cancelled = true;
                if (thread != null) {
                    thread.interrupt();
                }
            }
        }
    }

    /** The request, sent to another instance. */
    private static final class Placed extends HttpRequestWrapper {
        private final URI uri;

        Placed(HttpRequest request, URI uri) {
            super(request);
            this.uri = uri;
        }

        @Override
        public URI getURI() {
            return uri;
        }
    }
}

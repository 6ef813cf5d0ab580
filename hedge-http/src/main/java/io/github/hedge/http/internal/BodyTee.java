package io.github.hedge.http.internal;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpRequestDecorator;
import org.springframework.web.reactive.function.BodyInserter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One WebClient call's request body: the primary writes it through (with the application's codecs)
 * and keeps a copy, up to a limit; hedges replay the copy, waiting for it if they start before the
 * primary finished writing. A body over the limit, or a streamed one ({@code writeAndFlushWith}),
 * is not kept: {@code onOverflow} runs once (the adapter stops further attempts) and a hedge that
 * started already fails. Thread-safe.
 */
public final class BodyTee {
    private final int limit;
    private volatile Runnable onOverflow = () -> {};
    private final CompletableFuture<Captured> captured = new CompletableFuture<>();

    /** The headers the body writer set (Content-Type, Content-Length) and the bytes. */
    private record Captured(HttpHeaders headers, byte[] body) {}

    /**
     * @param limit the largest body kept, in bytes
     */
    public BodyTee(int limit) {
        this.limit = limit;
    }

    /**
     * @param original the request's body inserter
     * @param onOverflow runs once if the body is over the limit or streamed
     * @return the primary's inserter: writes through {@code original} and keeps a copy
     */
    public BodyInserter<Object, ClientHttpRequest> primary(
            BodyInserter<?, ? super ClientHttpRequest> original, Runnable onOverflow) {
        this.onOverflow = onOverflow;
        return (message, context) -> original.insert(new Tee(message), context);
    }

    /** @return a hedge's inserter: the primary's headers and bytes once they are complete */
    public BodyInserter<Object, ClientHttpRequest> replay() {
        return (message, context) -> Mono.fromFuture(captured, true).flatMap(c -> {
            if (c == null) {
                return Mono.error(new IllegalStateException(
                        "the request body is not available to a hedge (over the limit, streamed, or the primary"
                                + " failed before sending it)"));
            }
            message.getHeaders().putAll(c.headers);
            if (c.body.length == 0) {
                return message.setComplete();
            }
            return message.writeWith(
                    Mono.fromSupplier(() -> message.bufferFactory().wrap(c.body)));
        });
    }

    /**
     * The primary ended (failed, or was cancelled) before its body was complete: hedges waiting for
     * the body fail instead of waiting forever.
     */
    public void abandon() {
        captured.complete(null);
    }

    private void overflow() {
        if (captured.complete(null)) {
            onOverflow.run();
        }
    }

    private final class Tee extends ClientHttpRequestDecorator {
        private final HttpHeaders before;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private boolean over;

        Tee(ClientHttpRequest delegate) {
            super(delegate);
            HttpHeaders copy = new HttpHeaders();
            copy.putAll(delegate.getHeaders());
            this.before = copy;
        }

        @Override
        public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
            HttpHeaders added = added();
            return super.writeWith(Flux.from(body)
                    .doOnNext(this::copy)
                    .doOnComplete(() -> done(added))
                    .doOnError(e -> overflow()));
        }

        @Override
        public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
            overflow();
            return super.writeAndFlushWith(body);
        }

        @Override
        public Mono<Void> setComplete() {
            done(added());
            return super.setComplete();
        }

        private synchronized void copy(DataBuffer buffer) {
            if (over) {
                return;
            }
            if ((long) bytes.size() + buffer.readableByteCount() > limit) {
                over = true;
                bytes.reset();
                overflow();
                return;
            }
            try (DataBuffer.ByteBufferIterator it = buffer.readableByteBuffers()) {
                while (it.hasNext()) {
                    ByteBuffer b = it.next();
                    byte[] chunk = new byte[b.remaining()];
                    b.get(chunk);
                    bytes.write(chunk, 0, chunk.length);
                }
            }
        }

        private synchronized void done(HttpHeaders added) {
            if (!over) {
                captured.complete(new Captured(added, bytes.toByteArray()));
            }
        }

        private HttpHeaders added() {
            HttpHeaders now = getDelegate().getHeaders();
            HttpHeaders added = new HttpHeaders();
            now.forEach((name, values) -> {
                if (!values.equals(before.get(name))) {
                    added.put(name, values);
                }
            });
            return added;
        }
    }
}

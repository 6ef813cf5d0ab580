package io.github.hedge.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.KnownLength;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/**
 * How a call tells a request over {@code maxHedgedRequestBytes} ({@link HedgingCall#longerThan}):
 * exactly at the limit, whatever the marshaller's stream can do, and without reading past it.
 */
class RequestSizeTest {
    @Test
    void should_tell_a_request_one_byte_over_the_limit_when_its_stream_has_no_known_length() throws IOException {
        assertThat(HedgingCall.longerThan(bytes(1001), 1000)).isTrue();
        assertThat(HedgingCall.longerThan(bytes(1000), 1000)).isFalse();
        assertThat(HedgingCall.longerThan(bytes(1), 0)).isTrue();
        assertThat(HedgingCall.longerThan(bytes(0), 0)).isFalse();
    }

    @Test
    void should_count_every_byte_when_the_stream_skips_nothing() throws IOException {
        assertThat(HedgingCall.longerThan(new NoSkip(bytes(1001)), 1000)).isTrue();
        assertThat(HedgingCall.longerThan(new NoSkip(bytes(1000)), 1000)).isFalse();
    }

    @Test
    void should_count_every_byte_when_the_stream_skips_a_few_at_a_time() throws IOException {
        assertThat(HedgingCall.longerThan(new SkipsSeven(bytes(5001)), 5000)).isTrue();
        assertThat(HedgingCall.longerThan(new SkipsSeven(bytes(5000)), 5000)).isFalse();
    }

    @Test
    void should_read_no_more_than_one_byte_past_the_limit_when_the_stream_is_longer() throws IOException {
        Endless endless = new Endless();
        assertThat(HedgingCall.longerThan(endless, 1 << 20)).isTrue();
        assertThat(endless.consumed).isEqualTo((1 << 20) + 1);
    }

    @Test
    void should_take_the_length_a_stream_knows_when_it_knows_it() throws IOException {
        assertThat(HedgingCall.longerThan(new Known(1001), 1000)).isTrue();
        assertThat(HedgingCall.longerThan(new Known(1000), 1000)).isFalse();
    }

    private static InputStream bytes(int n) {
        return new ByteArrayInputStream(new byte[n]);
    }

    /** A stream whose skip never moves: the length must come from reads. */
    private static final class NoSkip extends FilterInputStream {
        NoSkip(InputStream in) {
            super(in);
        }

        @Override
        public long skip(long n) {
            return 0;
        }
    }

    /** A stream that skips at most 7 bytes per call. */
    private static final class SkipsSeven extends FilterInputStream {
        SkipsSeven(InputStream in) {
            super(in);
        }

        @Override
        public long skip(long n) throws IOException {
            return super.skip(Math.min(7, n));
        }
    }

    /** Zeros without end, counting what was taken. */
    private static final class Endless extends InputStream {
        long consumed;

        @Override
        public int read() {
            consumed++;
            return 0;
        }

        @Override
        public long skip(long n) {
            consumed += n;
            return n;
        }
    }

    /** A stream that knows its length, as protobuf's does; reading it fails. */
    private static final class Known extends InputStream implements KnownLength {
        private final int length;

        Known(int length) {
            this.length = length;
        }

        @Override
        public int available() {
            return length;
        }

        @Override
        public int read() throws IOException {
            throw new IOException("a stream of known length is not read");
        }
    }
}

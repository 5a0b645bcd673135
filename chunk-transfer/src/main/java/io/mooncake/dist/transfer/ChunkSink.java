package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Where received payload goes: positional writes into the caller's file plus a running SHA-256.
 *
 * <p>Works on the NIO views of the received (direct, pooled) buffers, so payload bytes move from the
 * socket buffer to the page cache without ever becoming a heap {@code byte[]}.
 */
final class ChunkSink {

    private final ByteSink target;
    private final MessageDigest digest;
    private long written;

    ChunkSink(FileChannel target, long startPosition) {
        this(ByteSink.positional(target, startPosition));
    }

    ChunkSink(ByteSink target) {
        this.target = target;
        try {
            this.digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }

    /**
     * Writes all readable bytes of {@code buf} at the next position and hashes them. Does not change
     * {@code buf}'s reader index nor the target's position.
     *
     * @return bytes written so far in total
     */
    long write(ByteBuf buf) throws IOException {
        for (ByteBuffer nio : buf.nioBuffers(buf.readerIndex(), buf.readableBytes())) {
            int n = nio.remaining();
            digest.update(nio.duplicate());
            target.write(nio);
            written += n;
        }
        return written;
    }

    /** Flushes whatever the target still buffers; called once, after the last byte. */
    void finish() throws IOException {
        target.finish();
    }

    void abort() {
        target.abort();
    }

    long written() {
        return written;
    }

    /** @return lower-case hex SHA-256 of everything written; call once, at the end */
    String sha256Hex() {
        return HexFormat.of().formatHex(digest.digest());
    }
}

package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Where received payload goes: positional writes into the caller's file plus a running {@link
 * ObjectDigest} in the algorithm the caller will compare with.
 *
 * <p>Works on the NIO views of the received (direct, pooled) buffers, so payload bytes move from
 * the socket buffer to the page cache without ever becoming a heap {@code byte[]}.
 */
final class ChunkSink {

  private final ByteSink target;
  private final ObjectDigest digest;
  private long written;

  ChunkSink(FileChannel target, long startPosition, ObjectDigest.Algorithm algorithm) {
    this(ByteSink.positional(target, startPosition), algorithm);
  }

  ChunkSink(ByteSink target, ObjectDigest.Algorithm algorithm) {
    this.target = target;
    this.digest = ObjectDigest.start(algorithm);
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
      digest.update(nio);
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

  /**
   * @return {@code "<algorithm>:<hex>"} of everything written; call once, at the end
   */
  String digest() {
    return digest.finish();
  }
}

package io.mooncake.dist.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where a fetch's payload bytes go, in order. The client hashes the bytes before handing them over;
 * the sink only stores them.
 */
public interface ByteSink {
  /** Stores all remaining bytes of {@code bytes} (which the sink must not keep after returning). */
  void write(ByteBuffer bytes) throws IOException;

  /** Called once after the last byte, before the fetch is reported complete. */
  default void finish() throws IOException {}

  /** Called instead of {@link #finish} when the fetch fails: release what the sink holds. */
  default void abort() {}

  /**
   * How many bytes from the start of the range this sink has handed to the file so far (a fetch
   * that fails can resume after them); 0 when the sink cannot tell. Bytes a sink still buffers are
   * not counted.
   */
  default long stored() {
    return 0;
  }

  /** Positional writes into {@code target} starting at {@code position}, through the page cache. */
  static ByteSink positional(java.nio.channels.FileChannel target, long position) {
    return new ByteSink() {
      private long next = position;

      @Override
      public void write(ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
          next += target.write(bytes, next);
        }
      }

      @Override
      public long stored() {
        return next - position;
      }
    };
  }
}

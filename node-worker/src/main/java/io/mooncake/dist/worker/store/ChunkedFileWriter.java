package io.mooncake.dist.worker.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.function.LongConsumer;

/**
 * Streams one source into one file channel: a single sequential pass through a bounded buffer, each
 * piece handed to a {@link RangeHasher} (which cuts it at object boundaries) and then written. The
 * source must yield exactly {@code sizeBytes}: fewer or more is a permanent failure, since the
 * manifest and the source disagree. Read failures (the source) are retryable; write failures are
 * classified by {@link FileOps#writeFailure}, so a full disk is permanent.
 */
final class ChunkedFileWriter {
  /** Copy buffer: bounded, so a multi-GiB file never sits in memory. */
  static final int BUFFER_BYTES = 1 << 20;

  /** How far past size_bytes to keep reading so the error can say how long the source really is. */
  private static final long OVERRUN_PROBE_BYTES = 64L << 20;

  private ChunkedFileWriter() {}

  /**
   * Copies {@code in} into {@code out} starting at position 0.
   *
   * @param source the URL or path, for messages
   * @param target the file being written, for messages
   * @param progress receives the cumulative bytes written to this file after each write
   */
  static void copy(
      InputStream in,
      String source,
      FileChannel out,
      Path target,
      long sizeBytes,
      RangeHasher hasher,
      LongConsumer progress)
      throws StoreException {
    copy(in, source, out, target, 0, sizeBytes, hasher, progress, () -> {});
  }

  /**
   * As above from byte {@code from} of the file ({@code in} yields the bytes from there on, and
   * {@code hasher} has been fed the ones before), calling {@code afterWrite} after every write,
   * once the written bytes are in the file (it publishes the objects that are now complete).
   */
  static void copy(
      InputStream in,
      String source,
      FileChannel out,
      Path target,
      long from,
      long sizeBytes,
      RangeHasher hasher,
      LongConsumer progress,
      AfterWrite afterWrite)
      throws StoreException {
    byte[] buf = new byte[(int) Math.min(BUFFER_BYTES, Math.max(sizeBytes, 1))];
    ByteBuffer wrapped = ByteBuffer.wrap(buf);
    long written = from;
    while (written < sizeBytes) {
      int n =
          read(
              in, source, buf, (int) Math.min(buf.length, sizeBytes - written), written, sizeBytes);
      if (n < 0) {
        throw sizeMismatch(source, Long.toString(written), sizeBytes);
      }
      hasher.update(buf, 0, n);
      wrapped.clear().limit(n);
      try {
        while (wrapped.hasRemaining()) {
          out.write(wrapped, written + wrapped.position());
        }
      } catch (IOException e) {
        throw FileOps.writeFailure(target, e);
      }
      written += n;
      progress.accept(written);
      afterWrite.run();
    }
    // The file is full; anything more the source offers means the manifest is wrong about it.
    long extra = 0;
    int n;
    while ((n = read(in, source, buf, buf.length, written + extra, sizeBytes)) >= 0) {
      extra += n;
      if (extra > OVERRUN_PROBE_BYTES) {
        throw sizeMismatch(source, "more than " + (sizeBytes + extra), sizeBytes);
      }
    }
    if (extra > 0) {
      throw sizeMismatch(source, Long.toString(sizeBytes + extra), sizeBytes);
    }
  }

  /** Called after each write; may publish completed objects. */
  @FunctionalInterface
  interface AfterWrite {
    void run() throws StoreException;
  }

  private static int read(
      InputStream in, String source, byte[] buf, int len, long soFar, long sizeBytes)
      throws StoreException {
    try {
      int n;
      do {
        n = in.read(buf, 0, len);
      } while (n == 0);
      return n;
    } catch (IOException e) {
      // A dropped connection or a read hiccup: the next attempt starts over and may well succeed.
      throw new StoreException(
          "reading source "
              + source
              + " failed after "
              + soFar
              + " of "
              + sizeBytes
              + " bytes (connection dropped or read error: "
              + FileOps.describe(e)
              + ")",
          true,
          e);
    }
  }

  private static StoreException sizeMismatch(String source, String yielded, long sizeBytes) {
    return new StoreException(
        "source " + source + " yielded " + yielded + " bytes, manifest size_bytes is " + sizeBytes,
        false);
  }
}

package io.mooncake.dist.worker.store;

import io.mooncake.dist.transfer.ObjectDigest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 helpers (digest creation, hex, hashing a file range) and an object digest of a file
 * range.
 */
final class Sha256 {
  /** Read buffer for hashing files: large enough for throughput, small enough to never matter. */
  static final int BUFFER_BYTES = 1 << 20;

  private static final HexFormat HEX = HexFormat.of();

  private Sha256() {}

  static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      // Every Java platform is required to provide SHA-256; its absence is a broken JRE.
      throw new IllegalStateException("SHA-256 is not available in this JRE", e);
    }
  }

  static String hex(byte[] digest) {
    return HEX.formatHex(digest);
  }

  /**
   * Hashes bytes {@code [offset, offset+length)} of {@code channel} with positional reads (the
   * channel's position is untouched, so concurrent users of the same channel are unaffected).
   *
   * @throws IOException when reading fails or the file ends before the range does
   */
  static byte[] hashRange(FileChannel channel, long offset, long length) throws IOException {
    MessageDigest md = newDigest();
    feedRange(channel, offset, length, md::update);
    return md.digest();
  }

  /** As {@link #hashRange}, as an object digest in {@code algorithm}. */
  static String digestRange(
      FileChannel channel, long offset, long length, ObjectDigest.Algorithm algorithm)
      throws IOException {
    ObjectDigest d = ObjectDigest.start(algorithm);
    feedRange(channel, offset, length, d::update);
    return d.finish();
  }

  private interface Bytes {
    void update(byte[] bytes, int off, int len);
  }

  private static void feedRange(FileChannel channel, long offset, long length, Bytes into)
      throws IOException {
    ByteBuffer buf = ByteBuffer.allocate((int) Math.min(BUFFER_BYTES, Math.max(length, 1)));
    long pos = offset;
    long end = offset + length;
    while (pos < end) {
      buf.clear().limit((int) Math.min(buf.capacity(), end - pos));
      int n = channel.read(buf, pos);
      if (n < 0) {
        throw new IOException("file ended at byte " + pos + " before the range end " + end);
      }
      into.update(buf.array(), 0, n);
      pos += n;
    }
  }
}

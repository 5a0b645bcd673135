package io.mooncake.dist.cli.manifest.hub;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One pass over a file's bytes giving its SHA-256 (for the manifest) and its git blob id (SHA-1 of
 * {@code "blob <size>\0"} and the bytes), which the hub's tree lists for every file: matching it
 * proves the bytes hashed are the ones the commit holds, not a proxy's or a cache's.
 */
final class BlobDigest {
  /** The bytes' count, SHA-256 and git blob id, lower-case hex. */
  record Result(long sizeBytes, String sha256Hex, String gitOid) {}

  private BlobDigest() {}

  /**
   * Reads {@code in} to its end, or until it passes {@code expectedSize} (a longer answer stops
   * there, its count one past).
   */
  static Result of(InputStream in, long expectedSize) throws IOException {
    MessageDigest sha256 = digest("SHA-256");
    MessageDigest sha1 = digest("SHA-1");
    sha1.update(("blob " + expectedSize + "\0").getBytes(StandardCharsets.US_ASCII));
    byte[] buffer = new byte[64 * 1024];
    long done = 0;
    int n;
    while (done <= expectedSize && (n = in.read(buffer)) >= 0) {
      sha256.update(buffer, 0, n);
      sha1.update(buffer, 0, n);
      done += n;
    }
    HexFormat hex = HexFormat.of();
    return new Result(done, hex.formatHex(sha256.digest()), hex.formatHex(sha1.digest()));
  }

  private static MessageDigest digest(String algorithm) {
    try {
      return MessageDigest.getInstance(algorithm);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has " + algorithm, e);
    }
  }
}

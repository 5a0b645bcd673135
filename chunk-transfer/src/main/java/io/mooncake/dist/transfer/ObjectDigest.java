package io.mooncake.dist.transfer;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * A running digest of an object's bytes, in the self-describing form {@code "<algorithm>:<hex>"}
 * that replicas are published and compared with. Two algorithms:
 *
 * <ul>
 *   <li>{@link Algorithm#CRC32C_CRC32} ({@code crc32c-crc32:}, 16 hex digits): CRC-32C and CRC-32
 *       (IEEE) of the same bytes, side by side. The two generator polynomials are coprime, so the
 *       pair is one 64-bit cyclic code: it detects every error burst up to 64 bits long and lets a
 *       random corruption through with probability 2<sup>-64</sup>. Both run as CPU intrinsics
 *       (about 5 GiB/s per core for the pair here), so verifying costs a tenth of what SHA-256 does
 *       and the disk, not the hash, bounds a copy. It guards against accidents (bit flips,
 *       truncations, a holder whose file changed), not against a forger: strangers are kept off the
 *       chunk port by the cluster-secret handshake, and chunks altered on the network path by TLS.
 *   <li>{@link Algorithm#SHA256} ({@code sha256:}, 64 hex digits): cryptographic, about 1 GiB/s per
 *       core; for chunks that cross an untrusted network in clear (no TLS on the chunk port), where
 *       it also catches deliberate alteration.
 * </ul>
 *
 * <p>Which one a seed publishes is its choice; everybody else verifies with the algorithm the
 * published digest names. Not thread-safe.
 */
public final class ObjectDigest {

  /** The digests a replica can be published with. */
  public enum Algorithm {
    CRC32C_CRC32("crc32c-crc32"),
    SHA256("sha256");

    private final String label;

    Algorithm(String label) {
      this.label = label;
    }

    /** The name as it appears before the colon of a digest and on the command line. */
    public String label() {
      return label;
    }

    /**
     * The algorithm called {@code label} (case-insensitive).
     *
     * @throws IllegalArgumentException naming the accepted labels when there is none
     */
    public static Algorithm ofLabel(String label) {
      for (Algorithm a : values()) {
        if (a.label.equalsIgnoreCase(label)) {
          return a;
        }
      }
      throw new IllegalArgumentException(
          "unknown object digest algorithm '"
              + label
              + "' (expected "
              + CRC32C_CRC32.label
              + " or "
              + SHA256.label
              + ")");
    }

    /**
     * The algorithm a digest of the form {@code "<algorithm>:<hex>"} names.
     *
     * @throws IllegalArgumentException when {@code digest} has no known algorithm or a malformed
     *     value
     */
    public static Algorithm of(String digest) {
      int colon = digest == null ? -1 : digest.indexOf(':');
      if (colon < 0) {
        throw new IllegalArgumentException(
            "not an object digest (expected <algorithm>:<hex>): " + digest);
      }
      Algorithm a = ofLabel(digest.substring(0, colon));
      String hex = digest.substring(colon + 1);
      if (hex.length() != a.hexDigits()
          || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
        throw new IllegalArgumentException(
            "malformed "
                + a.label
                + " digest (expected "
                + a.hexDigits()
                + " hex digits): "
                + digest);
      }
      return a;
    }

    int hexDigits() {
      return this == SHA256 ? 64 : 16;
    }
  }

  private static final HexFormat HEX = HexFormat.of();

  private final Algorithm algorithm;
  private final MessageDigest sha256;
  private final CRC32C crc32c;
  private final CRC32 crc32;

  private ObjectDigest(Algorithm algorithm) {
    this.algorithm = algorithm;
    if (algorithm == Algorithm.SHA256) {
      try {
        this.sha256 = MessageDigest.getInstance("SHA-256");
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("every Java platform must provide SHA-256", e);
      }
      this.crc32c = null;
      this.crc32 = null;
    } else {
      this.sha256 = null;
      this.crc32c = new CRC32C();
      this.crc32 = new CRC32();
    }
  }

  /** A fresh digest over no bytes yet. */
  public static ObjectDigest start(Algorithm algorithm) {
    return new ObjectDigest(java.util.Objects.requireNonNull(algorithm, "algorithm"));
  }

  /** A fresh digest with the algorithm that {@code expected} names, to compare against it. */
  public static ObjectDigest toCompareWith(String expected) {
    return start(Algorithm.of(expected));
  }

  /** Adds the buffer's remaining bytes, leaving its position and limit as they were. */
  public void update(ByteBuffer bytes) {
    if (sha256 != null) {
      sha256.update(bytes.duplicate());
    } else {
      crc32c.update(bytes.duplicate());
      crc32.update(bytes.duplicate());
    }
  }

  public void update(byte[] bytes, int off, int len) {
    if (sha256 != null) {
      sha256.update(bytes, off, len);
    } else {
      crc32c.update(bytes, off, len);
      crc32.update(bytes, off, len);
    }
  }

  /** {@code "<algorithm>:<lower hex>"} of every byte added, and starts over at no bytes. */
  public String finish() {
    String hex;
    if (sha256 != null) {
      hex = HEX.formatHex(sha256.digest());
    } else {
      hex = HEX.toHexDigits((int) crc32c.getValue()) + HEX.toHexDigits((int) crc32.getValue());
      crc32c.reset();
      crc32.reset();
    }
    return algorithm.label + ":" + hex;
  }

  /**
   * Whether two digests name the same bytes: same algorithm, same value (hex case ignored). Digests
   * of different algorithms never match: a replica hashed one way is re-hashed, not trusted, when
   * the expectation uses the other.
   */
  public static boolean same(String a, String b) {
    return a != null && b != null && a.toLowerCase(Locale.ROOT).equals(b.toLowerCase(Locale.ROOT));
  }
}

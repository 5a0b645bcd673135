package io.mooncake.dist.transfer;

/**
 * What a completed fetch wrote.
 *
 * <p>The digest covers exactly the bytes received from the peer. The client does not know what the
 * bytes should hash to: the caller compares {@code digest} against its own expectation and treats a
 * mismatch as a failed transfer.
 *
 * @param bytes number of bytes written into the target
 * @param digest {@code "<algorithm>:<lower hex>"} of those bytes, in the algorithm the fetch asked
 *     for
 */
public record FetchResult(long bytes, String digest) {

  /**
   * The bare lower-case hex SHA-256, for a fetch made with {@link ObjectDigest.Algorithm#SHA256}.
   */
  public String sha256Hex() {
    String prefix = ObjectDigest.Algorithm.SHA256.label() + ":";
    if (!digest.startsWith(prefix)) {
      throw new IllegalStateException("this fetch computed " + digest + ", not a SHA-256");
    }
    return digest.substring(prefix.length());
  }
}

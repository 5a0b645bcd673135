package io.mooncake.dist.transfer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * How the chunk port admits peers: the cluster secret every connection's handshake proves on both
 * sides, optionally TLS underneath (see PROTOCOL.md, "Handshake"). Server and client of one node
 * take the same instance; every member of a cluster must use the same secret and the same TLS
 * setting. There is no way to run either side without a secret.
 */
public final class ChunkSecurity {

  /** Shortest secret accepted, in bytes. */
  public static final int MIN_SECRET_BYTES = 32;

  /**
   * How long a connection may take to complete the handshake (TLS included) before it is closed.
   */
  public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  private final byte[] secret;
  private final ChunkTls tls;
  private final Duration handshakeTimeout;

  private ChunkSecurity(byte[] secret, ChunkTls tls, Duration handshakeTimeout) {
    this.secret = secret;
    this.tls = tls;
    this.handshakeTimeout = handshakeTimeout;
  }

  /**
   * @param clusterSecret the secret every member shares, at least {@value #MIN_SECRET_BYTES} bytes;
   *     copied, so the caller may wipe its array
   * @throws IllegalArgumentException if the secret is shorter
   */
  public static ChunkSecurity of(byte[] clusterSecret) {
    Objects.requireNonNull(clusterSecret, "clusterSecret");
    if (clusterSecret.length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(
          "cluster secret too short: "
              + clusterSecret.length
              + " bytes, need at least "
              + MIN_SECRET_BYTES);
    }
    return new ChunkSecurity(clusterSecret.clone(), null, DEFAULT_HANDSHAKE_TIMEOUT);
  }

  /** As {@link #of(byte[])} with the UTF-8 bytes of {@code clusterSecret}. */
  public static ChunkSecurity of(String clusterSecret) {
    return of(
        Objects.requireNonNull(clusterSecret, "clusterSecret").getBytes(StandardCharsets.UTF_8));
  }

  /** The same secret, with TLS (mutual: both sides present a certificate the other's CA signed). */
  public ChunkSecurity withTls(ChunkTls tls) {
    return new ChunkSecurity(secret, Objects.requireNonNull(tls, "tls"), handshakeTimeout);
  }

  /** The same, closing connections that have not authenticated within {@code timeout}. */
  public ChunkSecurity withHandshakeTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("handshake timeout must be positive: " + timeout);
    }
    return new ChunkSecurity(secret, tls, timeout);
  }

  /**
   * @return whether connections run over TLS
   */
  public boolean tls() {
    return tls != null;
  }

  /**
   * @return how long an unauthenticated connection is kept
   */
  public Duration handshakeTimeout() {
    return handshakeTimeout;
  }

  byte[] secret() {
    return secret;
  }

  ChunkTls tlsContexts() {
    return tls;
  }

  /** Never shows the secret. */
  @Override
  public String toString() {
    return "cluster secret (" + secret.length + " bytes), TLS " + (tls == null ? "off" : "on");
  }
}

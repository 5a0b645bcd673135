package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The arithmetic of the cluster handshake (PROTOCOL.md, "Handshake"): nonces, the two proofs and
 * their comparison. Each side proves it knows the cluster secret with an HMAC over both nonces, so
 * a proof cannot be replayed on another connection (the other side's nonce is fresh) nor reflected
 * back (client and server proofs carry different labels).
 */
final class Handshake {

  static final byte[] CLIENT_LABEL = "mooncake chunk v2 client".getBytes(StandardCharsets.US_ASCII);
  static final byte[] SERVER_LABEL = "mooncake chunk v2 server".getBytes(StandardCharsets.US_ASCII);

  private static final SecureRandom RANDOM = new SecureRandom();

  private Handshake() {}

  static byte[] nonce() {
    byte[] nonce = new byte[Protocol.NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    return nonce;
  }

  /** HMAC-SHA256(secret, label || 0x00 || serverNonce || clientNonce). */
  static byte[] proof(byte[] secret, byte[] label, byte[] serverNonce, byte[] clientNonce) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      mac.update(label);
      mac.update((byte) 0);
      mac.update(serverNonce);
      mac.update(clientNonce);
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every Java platform must provide HmacSHA256", e);
    }
  }

  /**
   * Constant-time comparison, so the time a refusal takes says nothing about the expected proof.
   */
  static boolean matches(byte[] expected, byte[] actual) {
    return MessageDigest.isEqual(expected, actual);
  }

  static void writePrefix(ByteBuf out) {
    out.writeInt(Protocol.HANDSHAKE_MAGIC);
    out.writeByte(Protocol.VERSION);
  }

  static byte[] read(ByteBuf in, int length) {
    byte[] bytes = new byte[length];
    in.readBytes(bytes);
    return bytes;
  }
}

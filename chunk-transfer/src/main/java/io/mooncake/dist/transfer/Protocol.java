package io.mooncake.dist.transfer;

/**
 * Constants of the chunk wire protocol. {@code chunk-transfer/PROTOCOL.md} is the specification;
 * these are its numbers. All integers on the wire are big-endian.
 */
public final class Protocol {

  /** First four bytes of every request and response frame: ASCII {@code "MCKT"}. */
  public static final int MAGIC = 0x4D434B54;

  /** First four bytes of every handshake frame: ASCII {@code "MCKA"}. */
  public static final int HANDSHAKE_MAGIC = 0x4D434B41;

  /** The only protocol version this code speaks; 2 added the handshake. */
  public static final int VERSION = 2;

  /** Bytes of each side's handshake nonce. */
  static final int NONCE_BYTES = 32;

  /** Bytes of an HMAC-SHA256. */
  static final int MAC_BYTES = 32;

  /** magic(4) version(1): the prefix of every frame. */
  static final int FRAME_PREFIX_BYTES = 5;

  /** CHALLENGE, server to client: prefix, server nonce. */
  static final int CHALLENGE_BYTES = FRAME_PREFIX_BYTES + NONCE_BYTES;

  /** PROOF, client to server: prefix, client nonce, client MAC. */
  static final int PROOF_BYTES = FRAME_PREFIX_BYTES + NONCE_BYTES + MAC_BYTES;

  /** ACCEPT, server to client: prefix, server MAC. */
  static final int ACCEPT_BYTES = FRAME_PREFIX_BYTES + MAC_BYTES;

  /** Longest object id, in UTF-8 bytes. */
  public static final int MAX_OBJECT_ID_BYTES = 1024;

  /** Longest error message, in UTF-8 bytes; longer messages are truncated by the sender. */
  public static final int MAX_ERROR_MESSAGE_BYTES = 4096;

  /** magic(4) version(1) requestId(4) objectIdLength(2). */
  static final int REQUEST_PREFIX_BYTES = 11;

  /** offset(8) length(8), after the object id. */
  static final int REQUEST_SUFFIX_BYTES = 16;

  /** magic(4) version(1) requestId(4) status(1). */
  static final int RESPONSE_PREFIX_BYTES = 10;

  /** Response prefix plus payloadLength(8). */
  static final int OK_HEADER_BYTES = RESPONSE_PREFIX_BYTES + 8;

  /** Response prefix plus messageLength(2); the message follows. */
  static final int ERROR_HEADER_FIXED_BYTES = RESPONSE_PREFIX_BYTES + 2;

  private Protocol() {}
}

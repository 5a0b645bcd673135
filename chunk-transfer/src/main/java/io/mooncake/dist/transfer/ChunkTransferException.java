package io.mooncake.dist.transfer;

import java.io.IOException;
import java.util.Objects;

/**
 * Every chunk transfer failure, with a {@link Kind} a caller can act on and a message naming the
 * object and the peer. The client never retries: after any of these the caller may retry the same
 * range, against the same or another peer.
 */
public final class ChunkTransferException extends IOException {

  private static final long serialVersionUID = 1L;

  /** Why a transfer failed, coarse enough to choose a reaction. */
  public enum Kind {
    /** The peer does not hold the object. Ask another peer. */
    NOT_FOUND,
    /**
     * The requested range lies outside the object as the peer knows it. Check the caller's
     * metadata.
     */
    RANGE_OUT_OF_BOUNDS,
    /** The peer holds the object but could not read it (missing, short or unreadable file). */
    SOURCE_ERROR,
    /**
     * The peer spoke something other than the chunk protocol, or broke it (e.g. sent extra bytes).
     */
    PROTOCOL,
    /**
     * Fewer bytes than requested ended up in the target: the connection ended mid-payload, or the
     * bytes could not be written to the local target.
     */
    SHORT_TRANSFER,
    /** The connection could not be made, or was lost before a response header arrived. */
    CONNECTION,
    /** No bytes arrived from the peer for the client's idle timeout. */
    TIMEOUT,
    /**
     * The peer is not a cluster member, or refused us as one: a cluster secret that differs, a TLS
     * certificate the other side's CA did not sign, TLS on one side only.
     */
    AUTHENTICATION,
    /**
     * The peer is already sending this object to as many readers as it serves one object to at a
     * time. Ask another peer, or this one again later; the peer is not at fault.
     */
    BUSY,
    /**
     * Writing the received bytes locally failed (the cause says why, e.g. a full disk); not the
     * peer's fault.
     */
    LOCAL_IO
  }

  private final Kind kind;

  /**
   * @param kind why the transfer failed
   * @param message what failed, naming the object and the peer
   */
  public ChunkTransferException(Kind kind, String message) {
    super(message);
    this.kind = Objects.requireNonNull(kind, "kind");
  }

  /**
   * @param kind why the transfer failed
   * @param message what failed, naming the object and the peer
   * @param cause the underlying failure
   */
  public ChunkTransferException(Kind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = Objects.requireNonNull(kind, "kind");
  }

  /**
   * @return why the transfer failed
   */
  public Kind kind() {
    return kind;
  }

  @Override
  public String toString() {
    return getClass().getName() + "[" + kind + "]: " + getMessage();
  }
}

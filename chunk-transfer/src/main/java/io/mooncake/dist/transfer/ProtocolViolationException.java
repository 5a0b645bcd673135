package io.mooncake.dist.transfer;

import io.netty.handler.codec.CorruptedFrameException;

/**
 * A peer broke the wire protocol. On the server it carries the error status to answer with before
 * closing; on the client it becomes a {@link ChunkTransferException.Kind#PROTOCOL} failure.
 */
final class ProtocolViolationException extends CorruptedFrameException {

  private static final long serialVersionUID = 1L;

  private final transient Status status;
  private final int requestId;

  ProtocolViolationException(Status status, int requestId, String message) {
    super(message);
    this.status = status;
    this.requestId = requestId;
  }

  /** The error status to answer with (server side). */
  Status status() {
    return status;
  }

  /** The request id, or 0 if the frame broke before its id could be read. */
  int requestId() {
    return requestId;
  }
}

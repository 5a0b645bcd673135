package io.mooncake.dist.transfer;

import io.netty.handler.codec.DecoderException;

/**
 * The client side of the handshake failed; carries the {@link ChunkTransferException.Kind} to
 * report.
 */
final class HandshakeFailure extends DecoderException {

  private static final long serialVersionUID = 1L;

  private final transient ChunkTransferException.Kind kind;

  HandshakeFailure(ChunkTransferException.Kind kind, String message) {
    super(message);
    this.kind = kind;
  }

  ChunkTransferException.Kind kind() {
    return kind;
  }
}

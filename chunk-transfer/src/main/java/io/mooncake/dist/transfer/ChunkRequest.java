package io.mooncake.dist.transfer;

import java.util.Objects;

/**
 * One decoded request: send bytes {@code [offset, offset + length)} of object {@code objectId}.
 * Offset and length are unsigned 64-bit on the wire; values above {@link Long#MAX_VALUE} appear
 * here as negative numbers and are rejected by the server as out of range.
 */
record ChunkRequest(int requestId, String objectId, long offset, long length) {

  ChunkRequest {
    Objects.requireNonNull(objectId, "objectId");
  }
}

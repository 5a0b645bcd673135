package io.mooncake.dist.transfer;

/** What one fetch asks of which peer; names both in every failure message. */
record FetchSpec(String peer, int requestId, String objectId, long offset, long length) {

  ChunkRequest toRequest() {
    return new ChunkRequest(requestId, objectId, offset, length);
  }

  /** e.g. {@code fetch of object 'llama/shard-3' bytes [0, 1048576) from 10.0.0.7:7070} */
  String describe() {
    return "fetch of object '"
        + objectId
        + "' bytes ["
        + offset
        + ", "
        + (offset + length)
        + ") from "
        + peer;
  }
}

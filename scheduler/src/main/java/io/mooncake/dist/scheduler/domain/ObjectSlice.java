package io.mooncake.dist.scheduler.domain;

/** One chunk object: which file of the manifest it belongs to and which byte range it covers. */
public record ObjectSlice(
    String objectId, int fileIndex, int chunkIndex, long offset, long length) {}

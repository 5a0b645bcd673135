package io.mooncake.dist.scheduler.domain;

/** How one file is cut into objects: fixed-size chunks, the last one possibly shorter. */
public record ChunkLayout(long chunkSizeBytes, int chunkCount, String objectPrefix) {}

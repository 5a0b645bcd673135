package io.mooncake.dist.scheduler.store;

/** A published object replica: which node holds it, where, and its digest. */
public record Replica(
    String objectId,
    String nodeId,
    long sizeBytes,
    String digest,
    String filePath,
    long fileOffset) {}

package io.mooncake.dist.scheduler.domain;

/**
 * One object as a task sees it: its byte range in its file and, once the seed has published it, the
 * digest every copy must match ({@code null} in a download, where the seed computes it).
 */
public record ObjectPlan(
    String objectId, int chunkIndex, long offset, long length, String digest) {}

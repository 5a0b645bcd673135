package io.mooncake.dist.scheduler.store;

import io.mooncake.dist.scheduler.domain.ModelRef;

/**
 * One row of the job list: the job as a whole, with its placements reduced to counts so a page of
 * jobs costs two queries however many targets each has. The full picture is the snapshot.
 */
public record JobSummary(
    String jobId,
    String status,
    ModelRef model,
    String seedNodeId,
    long totalSizeBytes,
    int targetCount,
    int placementsStaged,
    int placementsFailed,
    String createdAt,
    String updatedAt,
    String lastError) {}

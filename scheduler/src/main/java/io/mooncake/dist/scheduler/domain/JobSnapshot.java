package io.mooncake.dist.scheduler.domain;

import java.util.List;

/**
 * The RFC's job snapshot, field for field ({@code job_id}, {@code status}, {@code placements},
 * {@code last_error}), plus extra fields a caller may use: the model, the seed, the total size,
 * what {@code checksum_verified} rests on ({@code integrity}) and timestamps.
 */
public record JobSnapshot(
    String jobId,
    String status,
    List<PlacementSnapshot> placements,
    String lastError,
    ModelRef model,
    String seedNodeId,
    long totalSizeBytes,
    String integrity,
    String createdAt,
    String updatedAt) {

  public JobSnapshot {
    placements = List.copyOf(placements);
  }
}

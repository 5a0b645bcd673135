package io.mooncake.dist.scheduler.domain;

import java.util.List;

/**
 * The RFC's job snapshot, field for field ({@code job_id}, {@code status}, {@code placements},
 * {@code last_error}), plus extra fields a caller may use: the model, the seed, the total size,
 * what {@code checksum_verified} rests on ({@code integrity}), timestamps, and the seed failover
 * extension: {@code seed_history} (every node that has been the seed, the current one last) and
 * {@code fallback_seeds} (as requested; empty when none were named).
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
    String updatedAt,
    List<String> seedHistory,
    List<String> fallbackSeeds) {

  public JobSnapshot {
    placements = List.copyOf(placements);
    seedHistory = seedHistory == null ? List.of(seedNodeId) : List.copyOf(seedHistory);
    fallbackSeeds = fallbackSeeds == null ? List.of() : List.copyOf(fallbackSeeds);
  }
}

package io.mooncake.dist.scheduler.domain;

/**
 * One placement as the RFC's snapshot shows it, plus {@code role} ({@code seed}, {@code follower},
 * or {@code former_seed} for a seed a fallback seed replaced) and {@code total_bytes}.
 */
public record PlacementSnapshot(
    String nodeId,
    String state,
    String localPath,
    long stagedBytes,
    boolean checksumVerified,
    String lastError,
    String role,
    long totalBytes) {}

package io.mooncake.dist.cli.master;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One placement of a snapshot: the RFC's {@code node_id, state, staged_bytes, checksum_verified,
 * last_error} plus the master's {@code role} and {@code total_bytes}.
 */
public record PlacementView(
    String nodeId,
    String role,
    String state,
    long stagedBytes,
    long totalBytes,
    boolean checksumVerified,
    String lastError) {

  /**
   * Reads one placement; without {@code total_bytes} the job's total stands in (every target stages
   * all of it).
   */
  public static PlacementView of(JsonNode p, long jobTotalBytes) {
    return new PlacementView(
        p.path("node_id").asText("?"),
        p.path("role").asText(""),
        p.path("state").asText("unknown"),
        p.path("staged_bytes").asLong(0),
        p.path("total_bytes").asLong(jobTotalBytes),
        p.path("checksum_verified").asBoolean(false),
        Texts.orNull(p.path("last_error")));
  }
}

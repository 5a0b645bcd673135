package io.mooncake.dist.cli.master;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The fields of a job snapshot the CLI prints. Read leniently (a missing field is empty or zero),
 * so a master that adds or drops an extra field does not break {@code status} or {@code watch}.
 */
public record JobView(
    String jobId,
    String status,
    String lastError,
    String model,
    String seedNodeId,
    long totalSizeBytes,
    List<PlacementView> placements) {
  private static final Set<String> TERMINAL = Set.of("completed", "failed", "canceled");

  public JobView {
    placements = List.copyOf(placements);
  }

  /**
   * Reads the RFC snapshot ({@code job_id, status, last_error, placements[]}) and the master's
   * extras.
   */
  public static JobView of(JsonNode snapshot) {
    long total = snapshot.path("total_size_bytes").asLong(0);
    List<PlacementView> placements = new ArrayList<>();
    for (JsonNode p : snapshot.path("placements")) {
      placements.add(PlacementView.of(p, total));
    }
    return new JobView(
        snapshot.path("job_id").asText(""),
        snapshot.path("status").asText("unknown"),
        Texts.orNull(snapshot.path("last_error")),
        Texts.model(snapshot.path("model")),
        Texts.orNull(snapshot.path("seed_node_id")),
        total,
        placements);
  }

  /** Completed, failed or canceled: the job will not change any more. */
  public boolean terminal() {
    return TERMINAL.contains(status);
  }

  public boolean completed() {
    return "completed".equals(status);
  }
}

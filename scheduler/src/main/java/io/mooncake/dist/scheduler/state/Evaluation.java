package io.mooncake.dist.scheduler.state;

import io.mooncake.dist.scheduler.domain.JobStatus;
import java.util.List;

/** The output of one evaluation: the job's status, its placements, and what to enqueue next. */
public record Evaluation(
    JobStatus status, String lastError, List<PlacementView> placements, List<Action> actions) {
  public Evaluation {
    placements = List.copyOf(placements);
    actions = List.copyOf(actions);
  }
}

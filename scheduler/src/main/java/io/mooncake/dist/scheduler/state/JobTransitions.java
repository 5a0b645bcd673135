package io.mooncake.dist.scheduler.state;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;

/**
 * Every allowed state change, in one place (JobRunr's AllowedJobStateStateChanges). The RFC's
 * diagram, plus {@code PLANNED -> FAILED} and {@code PLANNED -> COMPLETED}: the loop persists only
 * what it observes, so a seed that fails (or a one-node job that stages) between two ticks skips
 * the intermediate state.
 */
public final class JobTransitions {
  private JobTransitions() {}

  public static boolean allowed(JobStatus from, JobStatus to) {
    if (from == to) {
      return true;
    }
    return switch (from) {
      case PLANNED ->
          to == JobStatus.SEEDING
              || to == JobStatus.REPLICATING
              || to == JobStatus.CANCELED
              || to == JobStatus.FAILED
              || to == JobStatus.COMPLETED;
      case SEEDING ->
          to == JobStatus.REPLICATING
              || to == JobStatus.FAILED
              || to == JobStatus.CANCELED
              || to == JobStatus.COMPLETED;
      case REPLICATING ->
          to == JobStatus.COMPLETED || to == JobStatus.FAILED || to == JobStatus.CANCELED;
      case COMPLETED, FAILED, CANCELED -> false;
    };
  }

  public static boolean allowed(PlacementState from, PlacementState to) {
    if (from == to) {
      return true;
    }
    return switch (from) {
      case PLANNED ->
          to == PlacementState.ACQUIRING
              || to == PlacementState.FAILED
              || to == PlacementState.STAGED;
      case ACQUIRING -> to == PlacementState.STAGED || to == PlacementState.FAILED;
      case STAGED, FAILED -> false;
    };
  }
}

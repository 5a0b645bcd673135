package io.mooncake.dist.scheduler.state;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;
import java.util.Arrays;
import java.util.List;

/**
 * Every allowed state change, in one place (JobRunr's AllowedJobStateStateChanges). The RFC's
 * diagram, plus {@code PLANNED -> FAILED} and {@code PLANNED -> COMPLETED}: the loop persists only
 * what it observes, so a seed that fails (or a one-node job that stages) between two ticks skips
 * the intermediate state.
 *
 * <p>Every write of a job's status or a placement's state goes through {@link #require} (the
 * scheduler's {@code ScheduleJob}) or {@link #sourcesOf} (a cancel's bulk update), so a change the
 * table forbids is never written: {@code require} throws, the transaction rolls back, and the
 * scheduler logs it and leaves the row as it was.
 */
public final class JobTransitions {
  private JobTransitions() {}

  /** Thrown for a state change the table does not allow; the write it guarded does not happen. */
  public static final class IllegalTransition extends IllegalStateException {
    IllegalTransition(String what, Enum<?> from, Enum<?> to) {
      super(what + " " + from + " -> " + to + " is not an allowed transition");
    }
  }

  /** {@code to}, when {@code from -> to} is allowed. */
  public static JobStatus require(JobStatus from, JobStatus to) {
    if (!allowed(from, to)) {
      throw new IllegalTransition("job status", from, to);
    }
    return to;
  }

  /** {@code to}, when {@code from -> to} is allowed. */
  public static PlacementState require(PlacementState from, PlacementState to) {
    if (!allowed(from, to)) {
      throw new IllegalTransition("placement state", from, to);
    }
    return to;
  }

  /** The job statuses that may change to {@code to} (other than {@code to} itself). */
  public static List<JobStatus> sourcesOf(JobStatus to) {
    return Arrays.stream(JobStatus.values()).filter(s -> s != to && allowed(s, to)).toList();
  }

  /** The placement states that may change to {@code to} (other than {@code to} itself). */
  public static List<PlacementState> sourcesOf(PlacementState to) {
    return Arrays.stream(PlacementState.values()).filter(s -> s != to && allowed(s, to)).toList();
  }

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

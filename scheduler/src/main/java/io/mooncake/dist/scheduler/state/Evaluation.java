package io.mooncake.dist.scheduler.state;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;
import java.util.List;

/** The output of one evaluation: the job's status, its placements, and what to enqueue next. */
public record Evaluation(
    JobStatus status, String lastError, List<PlacementView> placements, List<Action> actions) {
  public Evaluation {
    placements = List.copyOf(placements);
    actions = List.copyOf(actions);
  }

  /**
   * Whether applying this evaluation closes work a running task may still hand back: the job ends,
   * a placement leaves {@code planned}/{@code acquiring}, pending tasks of a placement that was
   * still open are canceled, or the seed is replaced. A task goes back to pending (a retry, a
   * deferral) only while its job is active and its placement acquiring, so such a pass must exclude
   * those hand-backs while it writes (the scheduler's exclusive job-row lock); any other pass need
   * not. The evaluator repeats a failed placement's cancel on every pass while its copies still
   * run; once the placement is recorded as failed, a hand-back sees that itself, so the repeats
   * close nothing (at 1,000 simulated nodes they would make most passes exclusive).
   *
   * @param before the placements' states before the evaluation, in {@link #placements}' order
   */
  public boolean closesWork(List<PlacementState> before) {
    if (status.terminal()) {
      return true;
    }
    java.util.Set<String> wasOpen = new java.util.HashSet<>();
    for (int i = 0; i < placements.size(); i++) {
      if (open(before.get(i))) {
        wasOpen.add(placements.get(i).nodeId());
        if (!open(placements.get(i).state())) {
          return true;
        }
      }
    }
    return actions.stream()
        .anyMatch(
            a ->
                a instanceof Action.FailOver
                    || a instanceof Action.CancelPendingTasks c && wasOpen.contains(c.nodeId()));
  }

  private static boolean open(PlacementState s) {
    return s == PlacementState.PLANNED || s == PlacementState.ACQUIRING;
  }
}

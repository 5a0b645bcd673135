package io.mooncake.dist.scheduler.state;

import static io.mooncake.dist.scheduler.domain.PlacementState.ACQUIRING;
import static io.mooncake.dist.scheduler.domain.PlacementState.FAILED;
import static io.mooncake.dist.scheduler.domain.PlacementState.PLANNED;
import static io.mooncake.dist.scheduler.domain.PlacementState.STAGED;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which passes close work a running task may still hand back ({@link Evaluation#closesWork}): those
 * must take the job row exclusively, every other pass must not (deferrals would queue behind it).
 */
class EvaluationTest {
  private static Evaluation of(JobStatus status, PlacementState follower, Action... actions) {
    return new Evaluation(
        status,
        null,
        List.of(new PlacementView("seed", STAGED, null), new PlacementView("f", follower, null)),
        List.of(actions));
  }

  private static boolean closes(Evaluation e, PlacementState followerBefore) {
    return e.closesWork(List.of(STAGED, followerBefore));
  }

  @Test
  void everyEndOfTheJobClosesWork() {
    for (JobStatus s : JobStatus.values()) {
      assertEquals(
          s.terminal(), closes(of(s, ACQUIRING), ACQUIRING), s + " with nothing else changed");
    }
  }

  @Test
  void aPlacementLeavingPlannedOrAcquiringClosesWork() {
    for (PlacementState before : PlacementState.values()) {
      for (PlacementState after : PlacementState.values()) {
        boolean open = before == PLANNED || before == ACQUIRING;
        boolean stillOpen = after == PLANNED || after == ACQUIRING;
        assertEquals(
            open && !stillOpen,
            closes(of(JobStatus.REPLICATING, after), before),
            before + " -> " + after);
      }
    }
  }

  @Test
  void cancelingAnOpenPlacementsTasksOrReplacingTheSeedClosesWorkAndReleasingOrEnqueuingDoesNot() {
    assertEquals(
        true,
        closes(
            of(JobStatus.REPLICATING, ACQUIRING, new Action.CancelPendingTasks("f")), ACQUIRING));
    assertEquals(
        true,
        closes(of(JobStatus.SEEDING, ACQUIRING, new Action.FailOver("seed", "f")), ACQUIRING));
    assertEquals(
        false,
        closes(
            of(
                JobStatus.REPLICATING,
                ACQUIRING,
                new Action.ReleaseCopies(List.of(new Action.Follower("f", 0)), 1),
                new Action.EnqueueMaterialize("seed"),
                new Action.EnqueueVerify("seed"),
                new Action.EnqueueDownload("seed")),
            ACQUIRING));
    assertEquals(false, closes(of(JobStatus.SEEDING, FAILED), FAILED), "already closed before");
    assertEquals(
        false,
        closes(of(JobStatus.REPLICATING, FAILED, new Action.CancelPendingTasks("f")), FAILED),
        "a failed placement's cancel, repeated while its copies run, closes nothing new");
    assertEquals(
        true,
        closes(of(JobStatus.REPLICATING, FAILED, new Action.CancelPendingTasks("f")), ACQUIRING),
        "the pass that fails the placement");
  }
}

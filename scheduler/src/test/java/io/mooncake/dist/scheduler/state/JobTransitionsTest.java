package io.mooncake.dist.scheduler.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The whole transition matrix, written out, so a change to the rules is a visible change here. */
class JobTransitionsTest {
  private static final Set<String> JOB_EDGES =
      Set.of(
          "PLANNED>SEEDING",
          "PLANNED>REPLICATING",
          "PLANNED>CANCELED",
          "PLANNED>FAILED",
          "PLANNED>COMPLETED",
          "SEEDING>REPLICATING",
          "SEEDING>FAILED",
          "SEEDING>CANCELED",
          "SEEDING>COMPLETED",
          "REPLICATING>COMPLETED",
          "REPLICATING>FAILED",
          "REPLICATING>CANCELED");

  private static final Set<String> PLACEMENT_EDGES =
      Set.of(
          "PLANNED>ACQUIRING",
          "PLANNED>FAILED",
          "PLANNED>STAGED",
          "ACQUIRING>STAGED",
          "ACQUIRING>FAILED");

  @Test
  void jobTransitionsAreExactlyTheRfcDiagramPlusObservedSkips() {
    for (JobStatus from : JobStatus.values()) {
      for (JobStatus to : JobStatus.values()) {
        boolean expected = from == to || JOB_EDGES.contains(from + ">" + to);
        assertEquals(expected, JobTransitions.allowed(from, to), from + " -> " + to);
      }
    }
  }

  @Test
  void placementTransitionsAreExactlyTheRfcDiagramPlusObservedSkips() {
    for (PlacementState from : PlacementState.values()) {
      for (PlacementState to : PlacementState.values()) {
        boolean expected = from == to || PLACEMENT_EDGES.contains(from + ">" + to);
        assertEquals(expected, JobTransitions.allowed(from, to), from + " -> " + to);
      }
    }
  }

  @Test
  void terminalJobStatesAreTerminal() {
    assertEquals(
        Set.of(JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELED),
        Set.of(JobStatus.values()).stream()
            .filter(JobStatus::terminal)
            .collect(java.util.stream.Collectors.toSet()));
  }

  @Test
  void aCancelFailsExactlyThePlacementsThatMayStillFail() {
    assertEquals(
        List.of(PlacementState.PLANNED, PlacementState.ACQUIRING),
        JobTransitions.sourcesOf(PlacementState.FAILED));
    assertEquals(
        List.of(JobStatus.PLANNED, JobStatus.SEEDING, JobStatus.REPLICATING),
        JobTransitions.sourcesOf(JobStatus.CANCELED));
  }

  @Test
  void requireRefusesAForbiddenChangeAndNamesIt() {
    assertEquals(
        JobStatus.COMPLETED, JobTransitions.require(JobStatus.REPLICATING, JobStatus.COMPLETED));
    var e =
        assertThrows(
            JobTransitions.IllegalTransition.class,
            () -> JobTransitions.require(PlacementState.STAGED, PlacementState.ACQUIRING));
    assertEquals(
        "placement state STAGED -> ACQUIRING is not an allowed transition", e.getMessage());
  }
}

package io.mooncake.dist.scheduler.state;

import static io.mooncake.dist.scheduler.domain.PlacementState.ACQUIRING;
import static io.mooncake.dist.scheduler.domain.PlacementState.FAILED;
import static io.mooncake.dist.scheduler.domain.PlacementState.PLANNED;
import static io.mooncake.dist.scheduler.domain.PlacementState.STAGED;
import static io.mooncake.dist.scheduler.domain.TaskType.MATERIALIZE;
import static io.mooncake.dist.scheduler.domain.TaskType.MODEL_DOWNLOAD;
import static io.mooncake.dist.scheduler.domain.TaskType.MODEL_VERIFY;
import static io.mooncake.dist.scheduler.domain.TaskType.REPLICA_COPY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;
import io.mooncake.dist.scheduler.domain.TaskType;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JobEvaluatorTest {
  private static final String SEED = "127.0.0.1:25001";
  private static final String F1 = "127.0.0.1:25002";
  private static final String F2 = "127.0.0.1:25003";
  private static final int OBJECTS = 4;

  private static TaskCounts pending(int n) {
    return new TaskCounts(n, 0, 0, 0, 0, null);
  }

  private static TaskCounts running(int n) {
    return new TaskCounts(0, n, 0, 0, 0, null);
  }

  private static TaskCounts done(int n) {
    return new TaskCounts(0, 0, n, 0, 0, null);
  }

  private static TaskCounts failed(String error) {
    return new TaskCounts(0, 0, 0, 1, 0, error);
  }

  private static NodeFacts node(String id, boolean seed, Object... typeAndCounts) {
    Map<TaskType, TaskCounts> m = new EnumMap<>(TaskType.class);
    for (int i = 0; i < typeAndCounts.length; i += 2) {
      m.put((TaskType) typeAndCounts[i], (TaskCounts) typeAndCounts[i + 1]);
    }
    return new NodeFacts(id, seed, m);
  }

  /**
   * Copies exist only for released objects: as many released as the follower with the most copies
   * has.
   */
  private static Evaluation eval(boolean seedHolds, NodeFacts... nodes) {
    int released =
        java.util.Arrays.stream(nodes)
            .mapToInt(n -> n.counts(REPLICA_COPY).total())
            .max()
            .orElse(0);
    return JobEvaluator.evaluate(
        new JobFacts(JobStatus.PLANNED, SEED, OBJECTS, seedHolds, List.of(nodes), released));
  }

  /**
   * The release the evaluator asks for: these followers, in this order, stripes 0, 1, ... of {@code
   * stripes}.
   */
  private static Action.ReleaseCopies release(int stripes, String... followers) {
    List<Action.Follower> out = new java.util.ArrayList<>();
    for (int i = 0; i < followers.length; i++) {
      out.add(new Action.Follower(followers[i], i));
    }
    return new Action.ReleaseCopies(out, stripes);
  }

  /** The release of a job that relays along a chain: these followers, all in file order. */
  private static Action.ReleaseCopies chain(String... followers) {
    List<Action.Follower> out = new java.util.ArrayList<>();
    for (String f : followers) {
      out.add(new Action.Follower(f, 0));
    }
    return new Action.ReleaseCopies(out, 1);
  }

  private static List<PlacementState> states(Evaluation e) {
    return e.placements().stream().map(PlacementView::state).toList();
  }

  @Test
  void aNewJobWhoseSeedLacksObjectsEnqueuesADownloadAndIsSeeding() {
    Evaluation e = eval(false, node(SEED, true), node(F1, false));
    assertEquals(JobStatus.SEEDING, e.status());
    assertEquals(
        List.of(new Action.EnqueueDownload(SEED)), e.actions(), "copies come one pass later");
    assertEquals(List.of(ACQUIRING, ACQUIRING), states(e));
  }

  @Test
  void aNewJobWhoseSeedHoldsEveryObjectVerifiesInsteadOfDownloadingAndIsReplicating() {
    Evaluation e = eval(true, node(SEED, true), node(F1, false));
    assertEquals(JobStatus.REPLICATING, e.status(), "seed reuse goes planned -> replicating");
    assertEquals(List.of(new Action.EnqueueVerify(SEED)), e.actions());
  }

  @Test
  void aVerifiedSeedGoesStraightToReplicationWithoutADownload() {
    Evaluation e = eval(true, node(SEED, true, MODEL_VERIFY, done(1)), node(F1, false));
    assertEquals(JobStatus.REPLICATING, e.status());
    assertEquals(List.of(release(1, F1)), e.actions());
    assertEquals(List.of(STAGED, ACQUIRING), states(e));
  }

  @Test
  void aFailedVerificationFallsBackToADownload() {
    Evaluation e =
        eval(true, node(SEED, true, MODEL_VERIFY, failed("digest mismatch")), node(F1, false));
    assertEquals(
        JobStatus.REPLICATING, e.status(), "a reused seed's job never moves back to seeding");
    assertEquals(List.of(new Action.EnqueueDownload(SEED), release(1, F1)), e.actions());
    assertEquals(ACQUIRING, e.placements().get(0).state());
  }

  @Test
  void aVerificationInProgressOffersOnlyReCheckedObjectsToFollowers() {
    Evaluation e = eval(true, node(SEED, true, MODEL_VERIFY, running(1)), node(F1, false));
    assertEquals(JobStatus.REPLICATING, e.status());
    assertEquals(List.of(release(1, F1)), e.actions());
  }

  @Test
  void aDownloadInProgressReleasesEveryPublishedObjectToFollowersAndStaysSeeding() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, running(1)),
            node(F1, false, REPLICA_COPY, pending(1)));
    assertEquals(JobStatus.SEEDING, e.status());
    assertEquals(List.of(release(1, F1)), e.actions());
    assertEquals(List.of(ACQUIRING, ACQUIRING), states(e));
  }

  @Test
  void followersOfALargerJobThanAChainStartAtDifferentObjects() {
    List<NodeFacts> nodes =
        new java.util.ArrayList<>(List.of(node(SEED, true, MODEL_DOWNLOAD, running(1))));
    String[] followers = new String[JobEvaluator.CHAIN_MAX_FOLLOWERS + 1];
    for (int i = 0; i < followers.length; i++) {
      followers[i] = "127.0.0.1:" + (26000 + i);
      nodes.add(node(followers[i], false));
    }
    Evaluation e = JobEvaluator.evaluate(new JobFacts(JobStatus.SEEDING, SEED, 64, false, nodes));
    assertEquals(List.of(release(followers.length, followers)), e.actions());
  }

  @Test
  void followersOfAChainTakeTheirCopiesInFileOrderAllOfThem() {
    List<NodeFacts> nodes =
        new java.util.ArrayList<>(List.of(node(SEED, true, MODEL_DOWNLOAD, running(1))));
    String[] followers = new String[JobEvaluator.CHAIN_MAX_FOLLOWERS];
    for (int i = 0; i < followers.length; i++) {
      followers[i] = "127.0.0.1:" + (26000 + i);
      nodes.add(node(followers[i], false));
    }
    Evaluation e = JobEvaluator.evaluate(new JobFacts(JobStatus.SEEDING, SEED, 64, false, nodes));
    assertEquals(
        List.of(chain(followers)),
        e.actions(),
        "each reads from the one before it, in the order that one receives them");
  }

  @Test
  void aFollowerCopyingWhileTheSeedDownloadsIsAcquiringAndNeverMaterializesEarly() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, running(1)),
            node(F1, false, REPLICA_COPY, new TaskCounts(0, 1, 2, 0, 0, null)));
    assertEquals(JobStatus.SEEDING, e.status());
    assertEquals(List.of(ACQUIRING, ACQUIRING), states(e));
    assertEquals(
        List.of(release(1, F1)),
        e.actions(),
        "objects not published yet are released on later passes");
    Evaluation allCopied =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, running(1)),
            node(F1, false, REPLICA_COPY, done(OBJECTS)));
    assertTrue(allCopied.actions().isEmpty(), "materialize waits for the seed to finish");
  }

  @Test
  void aFollowerCopyingWhileTheSeedVerifiesIsAcquiringButCannotMaterializeYet() {
    Evaluation e =
        eval(
            true,
            node(SEED, true, MODEL_VERIFY, running(1)),
            node(F1, false, REPLICA_COPY, done(OBJECTS)));
    assertEquals(List.of(ACQUIRING, ACQUIRING), states(e));
    assertTrue(e.actions().isEmpty(), "materialize waits for the verification to succeed");
  }

  @Test
  void aSeedFailureWhileFollowersCopyCancelsTheirPendingCopies() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, failed("source changed size")),
            node(F1, false, REPLICA_COPY, new TaskCounts(2, 1, 1, 0, 0, null)));
    assertEquals(JobStatus.FAILED, e.status());
    assertEquals(List.of(new Action.CancelPendingTasks(F1)), e.actions());
    assertEquals(List.of(FAILED, FAILED), states(e));
  }

  @Test
  void aFailedFollowerGetsNoFurtherCopiesAndTheOthersStillGetTheirs() {
    Evaluation e =
        JobEvaluator.evaluate(
            new JobFacts(
                JobStatus.SEEDING,
                SEED,
                OBJECTS,
                false,
                List.of(
                    node(SEED, true, MODEL_DOWNLOAD, running(1)),
                    node(F1, false, REPLICA_COPY, failed("disk full")),
                    node(F2, false, REPLICA_COPY, done(1))),
                1));
    assertEquals(List.of(ACQUIRING, FAILED, ACQUIRING), states(e));
    assertEquals(List.of(chain(F2)), e.actions());
  }

  @Test
  void aStagedFollowerGetsNoCopiesAndAFollowerWithoutCopiesStillAcquires() {
    Evaluation e =
        JobEvaluator.evaluate(
            new JobFacts(
                JobStatus.REPLICATING,
                SEED,
                OBJECTS,
                false,
                List.of(
                    node(SEED, true, MODEL_DOWNLOAD, done(1)),
                    node(F1, false, REPLICA_COPY, done(OBJECTS), MATERIALIZE, done(1)),
                    node(F2, false)),
                2));
    assertEquals(List.of(STAGED, STAGED, ACQUIRING), states(e));
    assertEquals(List.of(chain(F2)), e.actions());
  }

  @Test
  void aFailedDownloadFailsTheSeedAndTheJobAndStartsNoCopy() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, failed("source file not found: /x")),
            node(F1, false));
    assertEquals(JobStatus.FAILED, e.status());
    assertEquals("seed 127.0.0.1:25001 failed: source file not found: /x", e.lastError());
    assertEquals(List.of(FAILED, FAILED), states(e));
    assertEquals("source file not found: /x", e.placements().get(0).lastError());
    assertTrue(e.placements().get(1).lastError().contains("seed placement"));
    assertTrue(e.actions().isEmpty());
  }

  @Test
  void aFinishedDownloadEnqueuesCopiesForEveryFollower() {
    Evaluation e =
        eval(false, node(SEED, true, MODEL_DOWNLOAD, done(1)), node(F1, false), node(F2, false));
    assertEquals(JobStatus.REPLICATING, e.status());
    assertEquals(List.of(chain(F1, F2)), e.actions());
  }

  @Test
  void copiesInProgressEnqueueNothingMoreOnceEveryObjectIsReleased() {
    List<NodeFacts> nodes =
        List.of(
            node(SEED, true, MODEL_DOWNLOAD, done(1)),
            node(F1, false, REPLICA_COPY, new TaskCounts(1, 1, 2, 0, 0, null)));
    Evaluation e =
        JobEvaluator.evaluate(
            new JobFacts(JobStatus.REPLICATING, SEED, OBJECTS, false, nodes, OBJECTS));
    assertEquals(JobStatus.REPLICATING, e.status());
    assertTrue(e.actions().isEmpty(), "every object released: nothing to do");
    Evaluation partly =
        JobEvaluator.evaluate(
            new JobFacts(JobStatus.REPLICATING, SEED, OBJECTS, false, nodes, OBJECTS - 1));
    assertEquals(List.of(release(1, F1)), partly.actions(), "an object still to release");
    assertEquals(List.of(STAGED, ACQUIRING), states(e));
  }

  @Test
  void everyObjectCopiedEnqueuesMaterializeOnce() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, done(1)),
            node(F1, false, REPLICA_COPY, done(OBJECTS)));
    assertEquals(List.of(new Action.EnqueueMaterialize(F1)), e.actions());
    Evaluation again =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, done(1)),
            node(F1, false, REPLICA_COPY, done(OBJECTS), MATERIALIZE, pending(1)));
    assertTrue(again.actions().isEmpty());
    assertEquals(ACQUIRING, again.placements().get(1).state());
  }

  @Test
  void everyPlacementStagedCompletesTheJob() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, done(1)),
            node(F1, false, REPLICA_COPY, done(OBJECTS), MATERIALIZE, done(1)));
    assertEquals(JobStatus.COMPLETED, e.status());
    assertNull(e.lastError());
    assertEquals(List.of(STAGED, STAGED), states(e));
  }

  @Test
  void aOneNodeJobCompletesWhenTheSeedIsStaged() {
    Evaluation e = eval(false, node(SEED, true, MODEL_DOWNLOAD, done(1)));
    assertEquals(JobStatus.COMPLETED, e.status());
  }

  @Test
  void aFailedCopyFailsOnlyThatPlacementAndCancelsItsPendingCopies() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, done(1)),
            node(
                F1,
                false,
                REPLICA_COPY,
                new TaskCounts(2, 0, 1, 1, 0, "digest mismatch for chunk-001")),
            node(F2, false, REPLICA_COPY, running(OBJECTS)));
    assertEquals(JobStatus.REPLICATING, e.status());
    assertEquals(List.of(STAGED, FAILED, ACQUIRING), states(e));
    assertEquals("digest mismatch for chunk-001", e.placements().get(1).lastError());
    assertEquals(
        List.of(new Action.CancelPendingTasks(F1)), e.actions(), "every object released already");
  }

  @Test
  void aFollowerFailureFailsTheJobOnceTheOthersFinish() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, done(1)),
            node(F1, false, REPLICA_COPY, failed("peer closed")),
            node(F2, false, REPLICA_COPY, done(OBJECTS), MATERIALIZE, done(1)));
    assertEquals(JobStatus.FAILED, e.status());
    assertEquals("1 of 3 placements failed; 127.0.0.1:25002: peer closed", e.lastError());
  }

  @Test
  void aFailedMaterializeFailsThePlacementWithItsReason() {
    Evaluation e =
        eval(
            false,
            node(SEED, true, MODEL_DOWNLOAD, done(1)),
            node(
                F1,
                false,
                REPLICA_COPY,
                done(OBJECTS),
                MATERIALIZE,
                failed("checksum mismatch for model.bin")));
    assertEquals(JobStatus.FAILED, e.status());
    assertEquals(FAILED, e.placements().get(1).state());
    assertEquals("checksum mismatch for model.bin", e.placements().get(1).lastError());
  }

  @Test
  void aManifestWithoutObjectsGoesStraightToMaterialize() {
    Evaluation e =
        JobEvaluator.evaluate(
            new JobFacts(
                JobStatus.REPLICATING,
                SEED,
                0,
                false,
                List.of(node(SEED, true, MODEL_DOWNLOAD, done(1)), node(F1, false))));
    assertEquals(List.of(new Action.EnqueueMaterialize(F1)), e.actions());
  }

  /**
   * Walks a job through every reachable sequence of seed and follower outcomes and checks that
   * consecutive evaluations only make transitions the state model allows.
   */
  @Test
  void everyEvaluatedSequenceMakesOnlyAllowedTransitions() {
    List<List<NodeFacts>> timeline =
        List.of(
            List.of(node(SEED, true), node(F1, false)),
            List.of(node(SEED, true, MODEL_DOWNLOAD, pending(1)), node(F1, false)),
            List.of(node(SEED, true, MODEL_DOWNLOAD, running(1)), node(F1, false)),
            List.of(node(SEED, true, MODEL_DOWNLOAD, done(1)), node(F1, false)),
            List.of(
                node(SEED, true, MODEL_DOWNLOAD, done(1)),
                node(F1, false, REPLICA_COPY, pending(OBJECTS))),
            List.of(
                node(SEED, true, MODEL_DOWNLOAD, done(1)),
                node(F1, false, REPLICA_COPY, done(OBJECTS))),
            List.of(
                node(SEED, true, MODEL_DOWNLOAD, done(1)),
                node(F1, false, REPLICA_COPY, done(OBJECTS), MATERIALIZE, done(1))));
    JobStatus previous = JobStatus.PLANNED;
    List<PlacementState> previousStates = List.of(PLANNED, PLANNED);
    for (List<NodeFacts> nodes : timeline) {
      Evaluation e = JobEvaluator.evaluate(new JobFacts(previous, SEED, OBJECTS, false, nodes));
      assertTrue(JobTransitions.allowed(previous, e.status()), previous + " -> " + e.status());
      for (int i = 0; i < previousStates.size(); i++) {
        assertTrue(JobTransitions.allowed(previousStates.get(i), states(e).get(i)));
      }
      previous = e.status();
      previousStates = states(e);
    }
    assertEquals(JobStatus.COMPLETED, previous);
  }
}

package io.mooncake.dist.scheduler.state;

import static io.mooncake.dist.scheduler.domain.PlacementState.ACQUIRING;
import static io.mooncake.dist.scheduler.domain.PlacementState.FAILED;
import static io.mooncake.dist.scheduler.domain.PlacementState.STAGED;
import static io.mooncake.dist.scheduler.domain.TaskType.MATERIALIZE;
import static io.mooncake.dist.scheduler.domain.TaskType.MODEL_DOWNLOAD;
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

/**
 * Seed failover in {@link JobEvaluator}: every transition from a failed seed, with and without
 * fallback seeds, and the life of a seed that took over until the job completes.
 */
class SeedFailoverEvaluatorTest {
  private static final String SEED = "127.0.0.1:25001";
  private static final String F1 = "127.0.0.1:25002";
  private static final String F2 = "127.0.0.1:25003";
  private static final int OBJECTS = 4;
  private static final String GONE = "node 127.0.0.1:25001 gone for more than 5 s";

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

  private static Evaluation eval(
      JobStatus status, List<String> fallbacks, List<String> former, NodeFacts... nodes) {
    String seed =
        java.util.Arrays.stream(nodes).filter(NodeFacts::seed).findFirst().orElseThrow().nodeId();
    // Copies exist only for released objects: as many released as the node with the most copies.
    int released =
        java.util.Arrays.stream(nodes)
            .mapToInt(n -> n.counts(REPLICA_COPY).total())
            .max()
            .orElse(0);
    return JobEvaluator.evaluate(
        new JobFacts(status, seed, OBJECTS, false, List.of(nodes), released, fallbacks, former));
  }

  private static List<PlacementState> states(Evaluation e) {
    return e.placements().stream().map(PlacementView::state).toList();
  }

  @Test
  void withoutFallbackSeedsASeedFailureFailsTheJobAsTheRfcSays() {
    Evaluation e =
        eval(
            JobStatus.SEEDING,
            List.of(),
            List.of(),
            node(SEED, true, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, false, REPLICA_COPY, pending(2)),
            node(F2, false, REPLICA_COPY, done(2)));
    assertEquals(JobStatus.FAILED, e.status());
    assertEquals(List.of(FAILED, FAILED, FAILED), states(e));
    assertEquals("seed " + SEED + " failed: " + GONE, e.lastError());
    assertTrue(e.actions().stream().noneMatch(a -> a instanceof Action.FailOver));
  }

  @Test
  void aFailedSeedHandsOverToTheFirstFallbackSeedAndTheJobKeepsRunning() {
    Evaluation e =
        eval(
            JobStatus.SEEDING,
            List.of(F1, F2),
            List.of(),
            node(SEED, true, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, false, REPLICA_COPY, new TaskCounts(1, 0, 1, 0, 0, null)),
            node(F2, false, REPLICA_COPY, done(2)));
    assertEquals(List.of(new Action.FailOver(SEED, F1)), e.actions());
    assertEquals(JobStatus.SEEDING, e.status());
    assertNull(e.lastError());
    assertEquals(List.of(FAILED, ACQUIRING, ACQUIRING), states(e));
    assertEquals(GONE, e.placements().get(0).lastError());
  }

  @Test
  void aFallbackSeedWhosePlacementFailedIsSkipped() {
    Evaluation e =
        eval(
            JobStatus.SEEDING,
            List.of(F1, F2),
            List.of(),
            node(SEED, true, MODEL_DOWNLOAD, failed("HTTP 503")),
            node(F1, false, REPLICA_COPY, failed("disk full")),
            node(F2, false, REPLICA_COPY, done(2)));
    assertEquals(List.of(new Action.FailOver(SEED, F2)), e.actions());
    assertEquals(List.of(FAILED, FAILED, ACQUIRING), states(e));
  }

  @Test
  void aSeedFailureWithEveryFallbackSeedFailedFailsTheJob() {
    Evaluation e =
        eval(
            JobStatus.SEEDING,
            List.of(F1),
            List.of(),
            node(SEED, true, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, false, REPLICA_COPY, failed("disk full")),
            node(F2, false, REPLICA_COPY, pending(2)));
    assertEquals(JobStatus.FAILED, e.status());
    assertTrue(e.actions().stream().noneMatch(a -> a instanceof Action.FailOver));
  }

  @Test
  void aReplicatingJobStaysReplicatingWhenItsSeedIsReplaced() {
    Evaluation e =
        eval(
            JobStatus.REPLICATING,
            List.of(F1),
            List.of(),
            node(SEED, true, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, false, REPLICA_COPY, pending(2)));
    assertEquals(JobStatus.REPLICATING, e.status());
    assertEquals(List.of(new Action.FailOver(SEED, F1)), e.actions());
  }

  @Test
  void aJobReplicatingWhenItsSeedWasReplacedStaysReplicatingWhileTheNewSeedDownloads() {
    Evaluation e =
        eval(
            JobStatus.REPLICATING,
            List.of(F1),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, true, MODEL_DOWNLOAD, running(1)),
            node(F2, false, REPLICA_COPY, pending(2)));
    assertEquals(JobStatus.REPLICATING, e.status());
  }

  @Test
  void theNewSeedDownloadsWhileTheFollowersGetWhatItPublishesAndTheFormerSeedStaysFailed() {
    Evaluation e =
        eval(
            JobStatus.SEEDING,
            List.of(F1, F2),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, true, MODEL_DOWNLOAD, running(1), REPLICA_COPY, pending(1)),
            node(F2, false, REPLICA_COPY, done(2)));
    assertEquals(JobStatus.SEEDING, e.status());
    assertEquals(List.of(FAILED, ACQUIRING, ACQUIRING), states(e));
    assertEquals(GONE, e.placements().get(0).lastError());
    assertEquals(
        List.of(new Action.ReleaseCopies(List.of(new Action.Follower(F2, 0)), 1)), e.actions());
  }

  @Test
  void theNewSeedMaterializesOnceItsDownloadAndEveryCopyOfItsSucceeded() {
    NodeFacts f2 = node(F2, false, REPLICA_COPY, done(OBJECTS));
    Evaluation copying =
        eval(
            JobStatus.SEEDING,
            List.of(F1),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, true, MODEL_DOWNLOAD, done(1), REPLICA_COPY, running(1)),
            f2);
    assertTrue(copying.actions().stream().noneMatch(a -> a instanceof Action.EnqueueMaterialize));

    Evaluation ready =
        eval(
            JobStatus.SEEDING,
            List.of(F1),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, true, MODEL_DOWNLOAD, done(1), REPLICA_COPY, done(2)),
            f2);
    // The follower holds every object but waits for the seed to be staged.
    assertEquals(List.of(new Action.EnqueueMaterialize(F1)), ready.actions());
    assertEquals(List.of(FAILED, ACQUIRING, ACQUIRING), states(ready));
  }

  @Test
  void onceTheNewSeedIsStagedFollowersMaterializeAndTheJobCompletesDespiteTheFormerSeed() {
    Evaluation staged =
        eval(
            JobStatus.SEEDING,
            List.of(F1),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, true, MODEL_DOWNLOAD, done(1), REPLICA_COPY, done(2), MATERIALIZE, done(1)),
            node(F2, false, REPLICA_COPY, done(OBJECTS)));
    assertEquals(List.of(new Action.EnqueueMaterialize(F2)), staged.actions());
    assertEquals(JobStatus.REPLICATING, staged.status());
    assertEquals(List.of(FAILED, STAGED, ACQUIRING), states(staged));

    Evaluation completed =
        eval(
            JobStatus.REPLICATING,
            List.of(F1),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, true, MODEL_DOWNLOAD, done(1), REPLICA_COPY, done(2), MATERIALIZE, done(1)),
            node(F2, false, REPLICA_COPY, done(OBJECTS), MATERIALIZE, done(1)));
    assertEquals(JobStatus.COMPLETED, completed.status());
    assertNull(completed.lastError());
    assertEquals(List.of(FAILED, STAGED, STAGED), states(completed));
    assertEquals(GONE, completed.placements().get(0).lastError());
  }

  @Test
  void aFailedNewSeedHandsOverToTheNextFallbackSeed() {
    Evaluation e =
        eval(
            JobStatus.SEEDING,
            List.of(F1, F2),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, failed(GONE)),
            node(F1, true, MODEL_DOWNLOAD, failed("HTTP 404"), REPLICA_COPY, pending(1)),
            node(F2, false, REPLICA_COPY, done(2)));
    assertEquals(List.of(new Action.FailOver(F1, F2)), e.actions());
    assertEquals(List.of(FAILED, FAILED, ACQUIRING), states(e));
    assertEquals("HTTP 404", e.placements().get(1).lastError());
  }

  @Test
  void aNewSeedWhoseCopyFailedFailsTheJobWhenNoFallbackSeedIsLeft() {
    Evaluation e =
        eval(
            JobStatus.SEEDING,
            List.of(F1),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, failed(GONE)),
            node(
                F1,
                true,
                MODEL_DOWNLOAD,
                running(1),
                REPLICA_COPY,
                new TaskCounts(1, 0, 0, 1, 0, "no live node holds object m/r/chunk-001")),
            node(F2, false, REPLICA_COPY, pending(2)));
    assertEquals(JobStatus.FAILED, e.status());
    assertEquals("seed " + F1 + " failed: no live node holds object m/r/chunk-001", e.lastError());
    assertTrue(e.actions().contains(new Action.CancelPendingTasks(F1)));
    assertEquals(List.of(FAILED, FAILED, FAILED), states(e));
  }

  @Test
  void aFormerSeedWithOpenTasksHasThemCanceled() {
    Evaluation e =
        eval(
            JobStatus.SEEDING,
            List.of(F1),
            List.of(SEED),
            node(SEED, false, MODEL_DOWNLOAD, pending(1)),
            node(F1, true, MODEL_DOWNLOAD, running(1)),
            node(F2, false));
    assertTrue(e.actions().contains(new Action.CancelPendingTasks(SEED)));
    assertEquals(FAILED, e.placements().get(0).state());
  }
}

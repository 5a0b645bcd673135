package io.mooncake.dist.scheduler.state;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;
import io.mooncake.dist.scheduler.domain.TaskType;
import java.util.ArrayList;
import java.util.List;

/**
 * The one pure function from task outcomes to a job snapshot and the next actions.
 *
 * <p>Seed phase: with no seed task yet, a seed that already holds every object gets a {@code
 * MODEL_VERIFY} (seed reuse, job stays {@code planned}); otherwise a {@code MODEL_DOWNLOAD} ({@code
 * seeding}). A failed verification falls back to a download. A failed download fails the seed
 * placement and the job, and no follower copy is ever enqueued.
 *
 * <p>Followers: once the seed's task exists, every pass releases the objects the seed has published
 * since its current download attempt started (with seed reuse, every object it lists): each
 * follower still acquiring gets one claimable copy per released object, its own stripe of the
 * objects first, so followers copy while the seed still works (pipelining; the job stays {@code
 * seeding}). With every object copied and the seed staged a follower gets a {@code MATERIALIZE}. A
 * final failure of any of them fails that placement only. The job completes when every placement is
 * staged and fails once every placement is terminal and one failed.
 */
public final class JobEvaluator {
  private JobEvaluator() {}

  private enum SeedPhase {
    VERIFYING,
    SEEDING,
    READY,
    FAILED
  }

  public static Evaluation evaluate(JobFacts facts) {
    List<Action> actions = new ArrayList<>();
    NodeFacts seed =
        facts.nodes().stream()
            .filter(NodeFacts::seed)
            .findFirst()
            .orElseThrow(() -> new IllegalArgumentException("job has no seed placement"));

    SeedPhase phase;
    PlacementView seedView;
    TaskCounts download = seed.counts(TaskType.MODEL_DOWNLOAD);
    TaskCounts verify = seed.counts(TaskType.MODEL_VERIFY);
    if (download.none() && (verify.none() || verify.failed() > 0 || verify.canceled() > 0)) {
      if (verify.none() && facts.seedHoldsAllObjects()) {
        actions.add(new Action.EnqueueVerify(seed.nodeId()));
        phase = SeedPhase.VERIFYING;
      } else {
        actions.add(new Action.EnqueueDownload(seed.nodeId()));
        phase = SeedPhase.SEEDING;
      }
      seedView = new PlacementView(seed.nodeId(), PlacementState.ACQUIRING, null);
    } else if (download.none()) {
      boolean verified = verify.succeeded() > 0;
      phase = verified ? SeedPhase.READY : SeedPhase.VERIFYING;
      seedView =
          new PlacementView(
              seed.nodeId(), verified ? PlacementState.STAGED : PlacementState.ACQUIRING, null);
    } else if (download.succeeded() > 0) {
      phase = SeedPhase.READY;
      seedView = new PlacementView(seed.nodeId(), PlacementState.STAGED, null);
    } else if (download.failed() > 0 || download.canceled() > 0) {
      phase = SeedPhase.FAILED;
      seedView =
          new PlacementView(
              seed.nodeId(),
              PlacementState.FAILED,
              download.lastError() != null
                  ? download.lastError()
                  : "MODEL_DOWNLOAD did not complete");
    } else {
      phase = SeedPhase.SEEDING;
      seedView = new PlacementView(seed.nodeId(), PlacementState.ACQUIRING, null);
    }

    List<PlacementView> placements = new ArrayList<>();
    List<Action.Follower> acquiring = new ArrayList<>();
    int followers = facts.nodes().size() - 1;
    int k = 0;
    for (NodeFacts node : facts.nodes()) {
      if (node.seed()) {
        placements.add(seedView);
        continue;
      }
      int stripe = k++;
      PlacementView view = follower(node, phase, seed.nodeId(), facts.objectCount(), actions);
      placements.add(view);
      if (view.state() == PlacementState.ACQUIRING) {
        acquiring.add(new Action.Follower(node.nodeId(), stripe));
      }
    }
    // Copies are created as their objects are released, from the pass after the one that created
    // the seed's task, in their own transaction: the seed must not wait for a large insert.
    boolean seedTaskExists = !download.none() || !verify.none();
    if (phase != SeedPhase.FAILED
        && seedTaskExists
        && facts.releasedObjects() < facts.objectCount()
        && !acquiring.isEmpty()) {
      actions.add(new Action.ReleaseCopies(acquiring, followers));
    }
    boolean reused =
        !verify.none() || actions.stream().anyMatch(a -> a instanceof Action.EnqueueVerify);
    return new Evaluation(
        status(phase, reused, placements),
        lastError(phase, seedView, placements),
        placements,
        actions);
  }

  private static PlacementView follower(
      NodeFacts node, SeedPhase phase, String seedId, int objectCount, List<Action> actions) {
    TaskCounts copies = node.counts(TaskType.REPLICA_COPY);
    TaskCounts materialize = node.counts(TaskType.MATERIALIZE);
    String id = node.nodeId();
    if (phase == SeedPhase.FAILED) {
      if (copies.open() + materialize.open() > 0) {
        actions.add(new Action.CancelPendingTasks(id));
      }
      return new PlacementView(
          id, PlacementState.FAILED, "not started: the seed placement on " + seedId + " failed");
    }
    if (copies.failed() > 0) {
      if (copies.open() > 0) {
        actions.add(new Action.CancelPendingTasks(id));
      }
      return new PlacementView(id, PlacementState.FAILED, copies.lastError());
    }
    if (materialize.failed() > 0) {
      return new PlacementView(id, PlacementState.FAILED, materialize.lastError());
    }
    if (materialize.succeeded() > 0) {
      return new PlacementView(id, PlacementState.STAGED, null);
    }
    if (phase == SeedPhase.READY && copies.succeeded() >= objectCount && materialize.none()) {
      actions.add(new Action.EnqueueMaterialize(id));
    }
    return new PlacementView(id, PlacementState.ACQUIRING, null);
  }

  private static JobStatus status(
      SeedPhase phase, boolean seedWasReused, List<PlacementView> placements) {
    if (phase == SeedPhase.FAILED) {
      return JobStatus.FAILED;
    }
    if (placements.stream().allMatch(p -> p.state() == PlacementState.STAGED)) {
      return JobStatus.COMPLETED;
    }
    if (placements.stream().allMatch(p -> p.state().terminal())) {
      return JobStatus.FAILED;
    }
    // Seed reuse goes planned -> replicating (the RFC's diagram): the seed holds the data and
    // followers copy what it re-checks. Should the check fail, the fallback download does not move
    // the job back to seeding.
    return switch (phase) {
      case READY, VERIFYING -> JobStatus.REPLICATING;
      case SEEDING -> seedWasReused ? JobStatus.REPLICATING : JobStatus.SEEDING;
      case FAILED -> JobStatus.FAILED;
    };
  }

  private static String lastError(
      SeedPhase phase, PlacementView seed, List<PlacementView> placements) {
    if (phase == SeedPhase.FAILED) {
      return "seed " + seed.nodeId() + " failed: " + seed.lastError();
    }
    List<PlacementView> failed =
        placements.stream().filter(p -> p.state() == PlacementState.FAILED).toList();
    if (failed.isEmpty() || !placements.stream().allMatch(p -> p.state().terminal())) {
      return null;
    }
    PlacementView first = failed.get(0);
    return failed.size()
        + " of "
        + placements.size()
        + " placements failed; "
        + first.nodeId()
        + ": "
        + first.lastError();
  }
}

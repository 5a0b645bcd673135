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
 * objects first (in a job of at most {@link #CHAIN_MAX_FOLLOWERS} followers, all in file order), so
 * followers copy while the seed still works (pipelining; the job stays {@code seeding}). With every
 * object copied and the seed staged a follower gets a {@code MATERIALIZE}. A final failure of any
 * of them fails that placement only. The job completes when every placement is staged and fails
 * once every placement is terminal and one failed.
 *
 * <p>Seed failover (an extension beside the RFC): when the request named fallback seeds, a failed
 * seed placement does not fail the job while one of them has not failed: the evaluation is then a
 * single {@link Action.FailOver} to it, and from the next pass that node is the seed (see {@code
 * fallbackSeed}); the replaced seed stays failed.
 */
public final class JobEvaluator {
  private JobEvaluator() {}

  /**
   * The most followers a job may have for them to relay along a chain in target order (the worker's
   * {@code RelayChain}): each reads every object from the one before it, so all of them claim their
   * copies in file order, the order in which their predecessor receives them. In a larger job each
   * follower takes its own stripe of the objects first, so that the followers pull different
   * objects from the seed and relay them to each other.
   */
  public static final int CHAIN_MAX_FOLLOWERS = 8;

  private enum SeedPhase {
    VERIFYING,
    SEEDING,
    READY,
    FAILED
  }

  /** The seed's phase and placement, and whether it was reused (MODEL_VERIFY). */
  private record SeedView(SeedPhase phase, PlacementView view, boolean reused) {}

  public static Evaluation evaluate(JobFacts facts) {
    List<Action> actions = new ArrayList<>();
    NodeFacts seed =
        facts.nodes().stream()
            .filter(NodeFacts::seed)
            .findFirst()
            .orElseThrow(() -> new IllegalArgumentException("job has no seed placement"));
    SeedView s =
        facts.seedTookOver() ? fallbackSeed(seed, actions) : originalSeed(seed, facts, actions);
    if (s.phase() == SeedPhase.FAILED) {
      String next = nextFallback(facts, seed.nodeId());
      if (next != null) {
        return failOver(facts, s.view(), next);
      }
    }
    SeedPhase phase = s.phase();
    PlacementView seedView = s.view();

    List<PlacementView> placements = new ArrayList<>();
    List<Action.Follower> acquiring = new ArrayList<>();
    int followers = facts.nodes().size() - 1 - facts.formerSeeds().size();
    // A chain's followers claim in file order, each as its predecessor receives; a tree's stripe.
    boolean chain = followers <= CHAIN_MAX_FOLLOWERS;
    int k = 0;
    for (NodeFacts node : facts.nodes()) {
      if (node.seed()) {
        placements.add(seedView);
        continue;
      }
      if (facts.formerSeeds().contains(node.nodeId())) {
        placements.add(formerSeed(node, actions));
        continue;
      }
      int stripe = chain ? 0 : k++;
      PlacementView view = follower(node, phase, seed.nodeId(), facts.objectCount(), actions);
      placements.add(view);
      if (view.state() == PlacementState.ACQUIRING) {
        acquiring.add(new Action.Follower(node.nodeId(), stripe));
      }
    }
    // Copies are created as their objects are released, from the pass after the one that created
    // the seed's task, in their own transaction: the seed must not wait for a large insert.
    boolean seedTaskExists =
        !seed.counts(TaskType.MODEL_DOWNLOAD).none() || !seed.counts(TaskType.MODEL_VERIFY).none();
    if (phase != SeedPhase.FAILED
        && seedTaskExists
        && facts.releasedObjects() < facts.objectCount()
        && !acquiring.isEmpty()) {
      actions.add(new Action.ReleaseCopies(acquiring, chain ? 1 : followers));
    }
    boolean reused =
        s.reused() || actions.stream().anyMatch(a -> a instanceof Action.EnqueueVerify);
    // A replaced seed stays failed, but the job is judged by the placements still meant to stage:
    // the seed that took over and the followers.
    List<PlacementView> judged =
        placements.stream().filter(p -> !facts.formerSeeds().contains(p.nodeId())).toList();
    return new Evaluation(
        facts.seedTookOver()
            ? noStepBack(facts.status(), status(phase, reused, judged))
            : status(phase, reused, judged),
        lastError(phase, seedView, judged),
        placements,
        actions);
  }

  /** The seed the request named: verify what it holds or download, as the RFC says. */
  private static SeedView originalSeed(NodeFacts seed, JobFacts facts, List<Action> actions) {
    TaskCounts download = seed.counts(TaskType.MODEL_DOWNLOAD);
    TaskCounts verify = seed.counts(TaskType.MODEL_VERIFY);
    String id = seed.nodeId();
    boolean reused = !verify.none();
    if (download.none() && (verify.none() || verify.failed() > 0 || verify.canceled() > 0)) {
      if (verify.none() && facts.seedHoldsAllObjects()) {
        actions.add(new Action.EnqueueVerify(id));
        return new SeedView(
            SeedPhase.VERIFYING, new PlacementView(id, PlacementState.ACQUIRING, null), true);
      }
      actions.add(new Action.EnqueueDownload(id));
      return new SeedView(
          SeedPhase.SEEDING, new PlacementView(id, PlacementState.ACQUIRING, null), reused);
    }
    if (download.none()) {
      boolean verified = verify.succeeded() > 0;
      return new SeedView(
          verified ? SeedPhase.READY : SeedPhase.VERIFYING,
          new PlacementView(id, verified ? PlacementState.STAGED : PlacementState.ACQUIRING, null),
          reused);
    }
    if (download.succeeded() > 0) {
      return new SeedView(
          SeedPhase.READY, new PlacementView(id, PlacementState.STAGED, null), reused);
    }
    if (download.failed() > 0 || download.canceled() > 0) {
      return new SeedView(
          SeedPhase.FAILED,
          new PlacementView(
              id,
              PlacementState.FAILED,
              download.lastError() != null
                  ? download.lastError()
                  : "MODEL_DOWNLOAD did not complete"),
          reused);
    }
    return new SeedView(
        SeedPhase.SEEDING, new PlacementView(id, PlacementState.ACQUIRING, null), reused);
  }

  /**
   * A seed that took over from a failed one (seed failover). It was a follower: it keeps the copies
   * it has and copies the objects live nodes hold, and its {@code MODEL_DOWNLOAD} reads only the
   * others from the source into the same partial files, renaming nothing. Once that download and
   * every copy succeeded, its own {@code MATERIALIZE} checks and renames the files, and then it is
   * staged (and followers may materialize, as with any seed). Any of them failing fails it, and the
   * next fallback seed, if any, takes over.
   */
  private static SeedView fallbackSeed(NodeFacts seed, List<Action> actions) {
    TaskCounts download = seed.counts(TaskType.MODEL_DOWNLOAD);
    TaskCounts copies = seed.counts(TaskType.REPLICA_COPY);
    TaskCounts materialize = seed.counts(TaskType.MATERIALIZE);
    String id = seed.nodeId();
    if (materialize.succeeded() > 0) {
      return new SeedView(
          SeedPhase.READY, new PlacementView(id, PlacementState.STAGED, null), false);
    }
    String error = null;
    if (download.failed() > 0 || download.canceled() > 0) {
      error =
          download.lastError() != null ? download.lastError() : "MODEL_DOWNLOAD did not complete";
    } else if (copies.failed() > 0) {
      error = copies.lastError();
    } else if (materialize.failed() > 0) {
      error = materialize.lastError();
    }
    if (error != null) {
      if (copies.open() + download.open() + materialize.open() > 0) {
        actions.add(new Action.CancelPendingTasks(id));
      }
      return new SeedView(
          SeedPhase.FAILED, new PlacementView(id, PlacementState.FAILED, error), false);
    }
    if (download.succeeded() > 0 && copies.open() == 0 && materialize.none()) {
      actions.add(new Action.EnqueueMaterialize(id));
    }
    return new SeedView(
        SeedPhase.SEEDING, new PlacementView(id, PlacementState.ACQUIRING, null), false);
  }

  /** A seed a fallback replaced: failed for good, with the error that failed it. */
  private static PlacementView formerSeed(NodeFacts node, List<Action> actions) {
    int open = 0;
    String error = null;
    for (TaskType type : TaskType.values()) {
      TaskCounts c = node.counts(type);
      open += c.open();
      if (error == null && c.failed() > 0) {
        error = c.lastError();
      }
    }
    if (open > 0) {
      actions.add(new Action.CancelPendingTasks(node.nodeId()));
    }
    return new PlacementView(
        node.nodeId(),
        PlacementState.FAILED,
        error != null ? error : "replaced as seed by a fallback seed");
  }

  /**
   * The first fallback seed, in the request's order, that has not been the seed and whose placement
   * has not failed; null when none is left (then the seed's failure fails the job, as the RFC
   * says).
   */
  private static String nextFallback(JobFacts facts, String failedSeed) {
    for (String candidate : facts.fallbackSeeds()) {
      if (candidate.equals(failedSeed) || facts.formerSeeds().contains(candidate)) {
        continue;
      }
      for (NodeFacts node : facts.nodes()) {
        if (node.nodeId().equals(candidate)
            && follower(node, SeedPhase.SEEDING, failedSeed, facts.objectCount(), new ArrayList<>())
                    .state()
                != PlacementState.FAILED) {
          return candidate;
        }
      }
    }
    return null;
  }

  /**
   * The pass that hands the seed role to {@code next}: the failed seed's placement fails with its
   * error, every other placement keeps its state, and the job keeps its status (the next pass
   * evaluates the job with its new seed).
   */
  private static Evaluation failOver(JobFacts facts, PlacementView failedSeed, String next) {
    List<PlacementView> placements = new ArrayList<>();
    List<Action> ignored = new ArrayList<>();
    for (NodeFacts node : facts.nodes()) {
      if (node.seed()) {
        placements.add(failedSeed);
      } else if (facts.formerSeeds().contains(node.nodeId())) {
        placements.add(formerSeed(node, ignored));
      } else {
        placements.add(
            follower(node, SeedPhase.SEEDING, failedSeed.nodeId(), facts.objectCount(), ignored));
      }
    }
    JobStatus status =
        facts.status() == JobStatus.REPLICATING ? JobStatus.REPLICATING : JobStatus.SEEDING;
    return new Evaluation(
        status, null, placements, List.of(new Action.FailOver(failedSeed.nodeId(), next)));
  }

  /**
   * A job whose seed was replaced while it was {@code replicating} (its first seed was reused, then
   * fell back to a download that failed) stays {@code replicating} while the new seed downloads:
   * the RFC's diagram has no way back to {@code seeding}. Only for a seed that took over; otherwise
   * such a change stays an error the transition table refuses.
   */
  private static JobStatus noStepBack(JobStatus stored, JobStatus evaluated) {
    return stored == JobStatus.REPLICATING && evaluated == JobStatus.SEEDING
        ? JobStatus.REPLICATING
        : evaluated;
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

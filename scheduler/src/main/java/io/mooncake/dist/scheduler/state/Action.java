package io.mooncake.dist.scheduler.state;

import java.util.List;

/** What the scheduler loop must do after an evaluation. Every action is idempotent. */
public sealed interface Action {
  /** Give the seed a {@code MODEL_DOWNLOAD}. */
  record EnqueueDownload(String nodeId) implements Action {}

  /** Seed reuse: have the seed re-hash the objects it already holds. */
  record EnqueueVerify(String nodeId) implements Action {}

  /**
   * Release to the followers every object the seed has published since its current download attempt
   * started (with seed reuse, every object it lists) and whose copies do not exist yet: one {@code
   * REPLICA_COPY} per (object, follower), claimable at once. Follower {@code stripe} of {@code
   * stripes} takes its stripe first: objects {@code stripe, stripe + stripes, ...}, then the next
   * stripe, and so on, so followers pull different objects from the seed while it still publishes,
   * and the rest from one another.
   *
   * @param followers the followers still acquiring, each with its stripe
   * @param stripes how many followers the job has (its stripe count)
   */
  record ReleaseCopies(List<Follower> followers, int stripes) implements Action {
    public ReleaseCopies {
      followers = List.copyOf(followers);
    }
  }

  /** A follower that gets copies, and which stripe of the objects it takes first. */
  record Follower(String nodeId, int stripe) {}

  /** The follower holds every object: check and publish its files. */
  record EnqueueMaterialize(String nodeId) implements Action {}

  /**
   * Seed failover: the seed {@code from} failed and {@code to}, the next fallback seed whose
   * placement has not failed, becomes the seed. The scheduler records {@code from} as replaced,
   * withdraws the releases of objects no other node holds (their copies are released again once
   * {@code to} has them), and gives {@code to} a {@code MODEL_DOWNLOAD} that reads from the source
   * only the objects no live node holds; {@code to} copies the others like a follower.
   */
  record FailOver(String from, String to) implements Action {}

  /** Stop the node's tasks of this job that have not started. */
  record CancelPendingTasks(String nodeId) implements Action {}
}

package io.mooncake.dist.scheduler.state;

/** What the scheduler loop must do after an evaluation. Every action is idempotent. */
public sealed interface Action {
  /** Give the seed a {@code MODEL_DOWNLOAD}. */
  record EnqueueDownload(String nodeId) implements Action {}

  /** Seed reuse: have the seed re-hash the objects it already holds. */
  record EnqueueVerify(String nodeId) implements Action {}

  /**
   * One {@code REPLICA_COPY} per object for a follower, blocked until the object is released,
   * ordered so that this follower takes stripe {@code stripe} of {@code stripes} first: objects
   * {@code stripe, stripe + stripes, ...}, then the next stripe, and so on. Followers thus pull
   * different objects from the seed while it still publishes, and the rest from one another.
   */
  record EnqueueCopies(String nodeId, int stripe, int stripes) implements Action {}

  /** Release the blocked copies of every object the seed has published (or re-checked) so far. */
  record ReleaseCopies() implements Action {}

  /** The follower holds every object: check and publish its files. */
  record EnqueueMaterialize(String nodeId) implements Action {}

  /** Stop the node's tasks of this job that have not started. */
  record CancelPendingTasks(String nodeId) implements Action {}
}

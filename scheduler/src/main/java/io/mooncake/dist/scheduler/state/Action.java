package io.mooncake.dist.scheduler.state;

/** What the scheduler loop must do after an evaluation. Every action is idempotent. */
public sealed interface Action {
  /** Give the seed a {@code MODEL_DOWNLOAD}. */
  record EnqueueDownload(String nodeId) implements Action {}

  /** Seed reuse: have the seed re-hash the objects it already holds. */
  record EnqueueVerify(String nodeId) implements Action {}

  /**
   * One {@code REPLICA_COPY} per object the seed has published for a follower. With
   * {@code verifiedOnly}, only objects the seed's running {@code MODEL_VERIFY} has re-checked.
   */
  record EnqueueCopies(String nodeId, boolean verifiedOnly) implements Action {
    public EnqueueCopies(String nodeId) {
      this(nodeId, false);
    }
  }

  /** The follower holds every object: check and publish its files. */
  record EnqueueMaterialize(String nodeId) implements Action {}

  /** Stop the node's tasks of this job that have not started. */
  record CancelPendingTasks(String nodeId) implements Action {}
}

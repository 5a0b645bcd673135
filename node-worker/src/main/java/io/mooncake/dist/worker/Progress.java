package io.mooncake.dist.worker;

import io.mooncake.dist.scheduler.store.TaskQueue;
import java.util.function.LongConsumer;

/**
 * A running task's progress, so the snapshot's {@code staged_bytes} grows while a large object or
 * model is in flight. {@link #accept} only notes the count: it is called on the transfer's event
 * loop, which must never wait for the database (a progress write waits for a row lock and a commit,
 * milliseconds during which no connection of that loop is read). The node's {@link
 * ProgressReporter} writes what changed, for all running tasks in one statement.
 */
final class Progress implements LongConsumer {
  private final TaskQueue queue;
  private final long taskId;
  private final String leaseOwner;
  private volatile String source;
  private volatile long bytes;

  /** What was last written (by the heartbeat, or the reporter's own thread). */
  volatile long reported;

  Progress(TaskQueue queue, long taskId, String leaseOwner) {
    this.queue = queue;
    this.taskId = taskId;
    this.leaseOwner = leaseOwner;
  }

  long taskId() {
    return taskId;
  }

  String leaseOwner() {
    return leaseOwner;
  }

  long bytes() {
    return bytes;
  }

  /**
   * Records which node the bytes now come from, at once (on the task's thread): the row is how
   * other nodes see this copy's load on that source, and what makes this copy a relay for them.
   */
  void source(String nodeId) {
    if (nodeId.equals(recordedSource)) {
      // The claim named it already (TaskQueue.claimWithSources).
      recordedSource = null;
      this.source = nodeId;
      return;
    }
    recordedSource = null;
    this.source = nodeId;
    try {
      queue.progress(taskId, leaseOwner, bytes, nodeId);
    } catch (RuntimeException e) {
      // Advisory: a database that is away for a moment must not fail a transfer that is going fine.
      log.debug("source of task {} not recorded: {}", taskId, e.getMessage());
    }
  }

  /**
   * The task's row already names {@code nodeId} as its source (the claim wrote it): the next {@link
   * #source} call for that node needs no write.
   */
  void sourceRecorded(String nodeId) {
    this.recordedSource = nodeId;
  }

  private volatile String recordedSource;

  @Override
  public void accept(long bytes) {
    this.bytes = bytes;
  }

  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Progress.class);
}

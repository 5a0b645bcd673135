package io.mooncake.dist.worker;

import io.mooncake.dist.scheduler.store.TaskQueue;
import java.util.function.LongConsumer;

/**
 * Reports a task's progress to its row, at most every {@code intervalMs}, so the snapshot's
 * {@code staged_bytes} grows while a large object or model is in flight.
 */
final class Progress implements LongConsumer {
  private final TaskQueue queue;
  private final long taskId;
  private final String leaseOwner;
  private final long intervalNanos;
  private volatile String source;
  private long lastReport;

  Progress(TaskQueue queue, long taskId, String leaseOwner, long intervalMs) {
    this.queue = queue;
    this.taskId = taskId;
    this.leaseOwner = leaseOwner;
    this.intervalNanos = intervalMs * 1_000_000;
  }

  /** Records which node the bytes now come from (visible as in-flight load on that node). */
  void source(String nodeId) {
    this.source = nodeId;
    queue.progress(taskId, leaseOwner, 0, nodeId);
  }

  @Override
  public synchronized void accept(long bytes) {
    long now = System.nanoTime();
    if (now - lastReport >= intervalNanos) {
      lastReport = now;
      queue.progress(taskId, leaseOwner, bytes, source);
    }
  }
}

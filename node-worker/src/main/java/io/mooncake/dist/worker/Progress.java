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
    report(0);
  }

  @Override
  public synchronized void accept(long bytes) {
    long now = System.nanoTime();
    if (now - lastReport >= intervalNanos) {
      lastReport = now;
      report(bytes);
    }
  }

  /**
   * Progress is advisory: a database that is away for a moment must not fail a transfer that is
   * going fine (the outcome itself is recorded with retries).
   */
  private void report(long bytes) {
    try {
      queue.progress(taskId, leaseOwner, bytes, source);
    } catch (RuntimeException e) {
      log.debug("progress of task {} not recorded: {}", taskId, e.getMessage());
    }
  }

  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Progress.class);
}

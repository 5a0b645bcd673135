package io.mooncake.dist.worker;

import io.mooncake.dist.scheduler.store.TaskQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the progress of this node's running tasks every {@code interval}, on a thread of its own
 * and in one statement for all of them ({@link TaskQueue#progressAll}): one row lock on the
 * placement's byte count and one commit per interval, instead of one per task, and never on a
 * transfer's event loop. A task whose count did not move is not written, so its row ages, which is
 * how a stalled pull stops counting as in flight for other nodes.
 */
final class ProgressReporter implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProgressReporter.class);

  private final TaskQueue queue;
  private final Duration interval;
  private final Set<Progress> running = ConcurrentHashMap.newKeySet();
  private final Thread thread;
  private volatile boolean stopped;

  ProgressReporter(TaskQueue queue, Duration interval, String nodeId) {
    this.queue = queue;
    this.interval = interval;
    this.thread = Thread.ofPlatform().daemon().name("progress-" + nodeId).start(this::loop);
  }

  /** A task started: report its progress until {@link #finished}. */
  Progress start(long taskId, String leaseOwner) {
    Progress p = new Progress(queue, taskId, leaseOwner);
    running.add(p);
    return p;
  }

  /** The task ended; its outcome carries its final count. */
  void finished(Progress p) {
    running.remove(p);
  }

  private void loop() {
    while (!stopped) {
      try {
        Thread.sleep(interval.toMillis());
      } catch (InterruptedException e) {
        return;
      }
      reportOnce();
    }
  }

  /** Writes every count that moved since the last write. */
  void reportOnce() {
    List<Progress> moved = new ArrayList<>();
    for (Progress p : running) {
      if (p.bytes() != p.reported) {
        moved.add(p);
      }
    }
    if (moved.isEmpty()) {
      return;
    }
    long[] ids = new long[moved.size()];
    String[] owners = new String[moved.size()];
    long[] bytes = new long[moved.size()];
    for (int i = 0; i < ids.length; i++) {
      Progress p = moved.get(i);
      ids[i] = p.taskId();
      owners[i] = p.leaseOwner();
      bytes[i] = p.bytes();
    }
    try {
      queue.progressAll(ids, owners, bytes);
      for (int i = 0; i < ids.length; i++) {
        moved.get(i).reported = bytes[i];
      }
    } catch (RuntimeException e) {
      // Advisory: the next round tries again; outcomes are recorded with retries of their own.
      log.debug("progress of {} task(s) not recorded: {}", ids.length, e.getMessage());
    }
  }

  @Override
  public void close() {
    stopped = true;
    thread.interrupt();
  }
}

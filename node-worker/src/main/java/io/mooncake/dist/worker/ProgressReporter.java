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
 * The progress of this node's running tasks, written in one statement for all of them: one row lock
 * on the placement's byte count and one commit per round, instead of one per task, and never on a
 * transfer's event loop. A task whose count did not move is not written, so its row ages, which is
 * how a stalled pull stops counting as in flight for other nodes.
 *
 * <p>Normally the counts ride on the heartbeats that renew the leases ({@link #moved} and {@link
 * #recorded}; every few heartbeats, at most every {@link RenewalCadence#AT_MOST}), whose renewal
 * writes these rows anyway (issue 19: a progress statement per node and second was 9,900 of the
 * statements of a 100-node job). With a heartbeat slower than {@link #RIDE_AT_MOST}, a thread of
 * its own writes them every {@code interval} instead ({@link TaskQueue#progressAll}): a relaying
 * copy must be written well within the relay freshness window ({@link TaskExecutor#RELAY_FRESH}).
 */
final class ProgressReporter implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProgressReporter.class);

  private final TaskQueue queue;
  private final Duration interval;
  private final Set<Progress> running = ConcurrentHashMap.newKeySet();
  private final Thread thread;
  private volatile boolean stopped;

  /** The slowest heartbeat that still carries the progress. */
  static final Duration RIDE_AT_MOST = Duration.ofSeconds(2);

  /**
   * @param heartbeat the node's heartbeat interval: at most {@link #RIDE_AT_MOST}, the counts ride
   *     on it and no thread of its own writes them
   */
  ProgressReporter(TaskQueue queue, Duration interval, Duration heartbeat, String nodeId) {
    this.queue = queue;
    this.interval = interval;
    this.thread =
        heartbeat.compareTo(RIDE_AT_MOST) <= 0
            ? null
            : Thread.ofPlatform().daemon().name("progress-" + nodeId).start(this::loop);
  }

  /** Whether the heartbeat carries the counts. */
  boolean ridesOnHeartbeat() {
    return thread == null;
  }

  /**
   * For the heartbeat: per task of {@code taskIds}, in order, its count if it moved since last
   * recorded, else -1; null when none moved (or a thread of its own writes them).
   */
  List<Long> moved(List<Long> taskIds) {
    if (thread != null) {
      return null;
    }
    java.util.Map<Long, Progress> byTask = new java.util.HashMap<>();
    for (Progress p : running) {
      byTask.put(p.taskId(), p);
    }
    List<Long> out = new ArrayList<>(taskIds.size());
    boolean any = false;
    for (Long id : taskIds) {
      Progress p = byTask.get(id);
      long b = p == null ? -1 : p.bytes();
      if (p != null && b != p.reported) {
        out.add(b);
        any = true;
      } else {
        out.add(-1L);
      }
    }
    return any ? out : null;
  }

  /** The heartbeat carrying {@link #moved}'s counts was recorded. */
  void recorded(List<Long> taskIds, List<Long> bytes) {
    if (bytes == null) {
      return;
    }
    for (Progress p : running) {
      int i = taskIds.indexOf(p.taskId());
      if (i >= 0 && bytes.get(i) >= 0) {
        p.reported = bytes.get(i);
      }
    }
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
    if (thread != null) {
      thread.interrupt();
    }
  }
}

package io.mooncake.dist.master.nodelink;

import io.mooncake.dist.scheduler.store.ArtifactDeletions;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The wake-ups a master holds for the nodes that long-poll it instead of listening to Postgres
 * themselves: the master's one {@code LISTEN mooncake_node} session feeds {@link #wake}, and each
 * node's long-poll waits in {@link #await} for its own counter to move past the token it last saw.
 *
 * <p>A notification's payload is the node's id (tasks) or {@link ArtifactDeletions#NOTICE} and the
 * id (artifact deletions, V023): a node looks at its deletions only when told of one, not at every
 * task wake-up (issue 19: with both on one signal, the deletion poll was 0.7 statements a copy,
 * every node polling on every release of the job).
 *
 * <p>A token is {@code <master instance>.<count>.<deletions>}. A token from another master, or from
 * this master's earlier run, is answered at once with both kinds (the node may have missed
 * something there), and so is every token after the LISTEN session (re)connected ({@link
 * #wakeAll}). A node is never told less than happened, only sometimes more: a spurious wake-up
 * costs it one claim or one deletion poll.
 */
public final class NodeWakeups {
  private final String instance = UUID.randomUUID().toString().substring(0, 8);
  private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();

  /** One node's counter and the long-polls waiting on it. */
  private static final class Slot {
    final ReentrantLock lock = new ReentrantLock();
    final Condition moved = lock.newCondition();
    long count;
    long deletions;
  }

  /**
   * What a long-poll answers: whether the node should look for work, whether for artifact deletions
   * among it, and its next token.
   */
  public record Answer(boolean woken, boolean deletions, String token) {}

  /**
   * A notification's payload: work for the node it names may have appeared, artifact deletions when
   * it starts with {@link ArtifactDeletions#NOTICE}.
   */
  public void wake(String payload) {
    boolean deletion = payload.startsWith(ArtifactDeletions.NOTICE);
    String nodeId = deletion ? payload.substring(ArtifactDeletions.NOTICE.length()) : payload;
    bump(slots.computeIfAbsent(nodeId, n -> new Slot()), deletion);
  }

  /** Anything may have been missed (the LISTEN session was down): wake every node. */
  public void wakeAll() {
    slots.values().forEach(s -> bump(s, true));
  }

  private static void bump(Slot s, boolean deletion) {
    s.lock.lock();
    try {
      s.count++;
      if (deletion) {
        s.deletions++;
      }
      s.moved.signalAll();
    } finally {
      s.lock.unlock();
    }
  }

  /**
   * Waits until {@code nodeId} is woken after {@code since} (a token this master handed out), or
   * {@code waitMillis} pass.
   */
  public Answer await(String nodeId, String since, long waitMillis) throws InterruptedException {
    Slot s = slots.computeIfAbsent(nodeId, n -> new Slot());
    long[] seen = parse(since);
    s.lock.lock();
    try {
      if (seen == null) {
        return new Answer(true, true, token(s));
      }
      long left = TimeUnit.MILLISECONDS.toNanos(waitMillis);
      while (s.count <= seen[0] && left > 0) {
        left = s.moved.awaitNanos(left);
      }
      return new Answer(s.count > seen[0], s.deletions > seen[1], token(s));
    } finally {
      s.lock.unlock();
    }
  }

  /** The two counts a token of this master's run names, or null for any other token. */
  private long[] parse(String token) {
    if (token == null || !token.startsWith(instance + ".")) {
      return null;
    }
    String[] counts = token.substring(instance.length() + 1).split("\\.", -1);
    if (counts.length != 2) {
      return null;
    }
    try {
      return new long[] {Long.parseLong(counts[0]), Long.parseLong(counts[1])};
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private String token(Slot s) {
    return instance + "." + s.count + "." + s.deletions;
  }

  /** Nodes that have long-polled this master (for its metrics). */
  public int nodes() {
    return slots.size();
  }
}

package io.mooncake.dist.master.nodelink;

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
 * <p>A token is {@code <master instance>.<count>}. A token from another master, or from this
 * master's earlier run, is answered at once (the node may have missed something there), and so is
 * every token after the LISTEN session (re)connected ({@link #wakeAll}). A node is never told less
 * than happened, only sometimes more: a spurious wake-up costs it one claim.
 */
public final class NodeWakeups {
  private final String instance = UUID.randomUUID().toString().substring(0, 8);
  private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();

  /** One node's counter and the long-polls waiting on it. */
  private static final class Slot {
    final ReentrantLock lock = new ReentrantLock();
    final Condition moved = lock.newCondition();
    long count;
  }

  /** What a long-poll answers: whether the node should look for work, and its next token. */
  public record Answer(boolean woken, String token) {}

  /** Work for {@code nodeId} may have appeared. */
  public void wake(String nodeId) {
    bump(slots.computeIfAbsent(nodeId, n -> new Slot()));
  }

  /** Anything may have been missed (the LISTEN session was down): wake every node. */
  public void wakeAll() {
    slots.values().forEach(NodeWakeups::bump);
  }

  private static void bump(Slot s) {
    s.lock.lock();
    try {
      s.count++;
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
    long seen = parse(since);
    s.lock.lock();
    try {
      if (seen < 0) {
        return new Answer(true, token(s.count));
      }
      long left = TimeUnit.MILLISECONDS.toNanos(waitMillis);
      while (s.count <= seen && left > 0) {
        left = s.moved.awaitNanos(left);
      }
      return new Answer(s.count > seen, token(s.count));
    } finally {
      s.lock.unlock();
    }
  }

  /** The count a token of this master's run names, or -1 for any other token. */
  private long parse(String token) {
    if (token == null || !token.startsWith(instance + ".")) {
      return -1;
    }
    try {
      return Long.parseLong(token.substring(instance.length() + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private String token(long count) {
    return instance + "." + count;
  }

  /** Nodes that have long-polled this master (for its metrics). */
  public int nodes() {
    return slots.size();
  }
}

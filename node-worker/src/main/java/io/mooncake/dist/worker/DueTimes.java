package io.mooncake.dist.worker;

import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;

/**
 * When this node's own tasks become claimable again without any notification announcing it: a
 * deferred copy ({@link TaskDeferred#DELAY_MS} later) and a failed attempt after its backoff. The
 * claim loop sleeps no longer than until the earliest of them.
 *
 * <p>Every due time is kept until a claim that started after it has run, not only the earliest: a
 * single "next due" slot lost the later ones whenever an earlier one was consumed, and a claim that
 * ran just before a due time consumed it without finding the task. With a master link up the loop's
 * safety-net poll is a minute, so each lost due time left a task pending for up to a minute with
 * nothing running (a follower sat at 63 of 64 objects in {@code SeedDownloadResumeTest}).
 */
final class DueTimes {
  private final PriorityQueue<Long> due = new PriorityQueue<>();

  /** A task of this node becomes claimable at {@code nanoTime} ({@link System#nanoTime()}). */
  synchronized void add(long nanoTime) {
    due.add(nanoTime);
  }

  /**
   * How long the claim loop may sleep, at most {@code sleepMs}: until the earliest due time a claim
   * has not yet covered, plus a millisecond. Due times at or before {@code claimStartedNanos} (the
   * moment the last claim began, so it saw those tasks claimable) are dropped.
   */
  synchronized long sleepMs(long claimStartedNanos, long nowNanos, long sleepMs) {
    while (!due.isEmpty() && due.peek() - claimStartedNanos <= 0) {
      due.poll();
    }
    if (due.isEmpty()) {
      return sleepMs;
    }
    long untilMs = TimeUnit.NANOSECONDS.toMillis(due.peek() - nowNanos) + 1;
    return Math.max(1, Math.min(sleepMs, untilMs));
  }

  /** Due times not yet covered by a claim (for tests). */
  synchronized int size() {
    return due.size();
  }
}

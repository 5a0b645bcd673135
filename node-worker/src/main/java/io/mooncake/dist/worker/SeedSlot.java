package io.mooncake.dist.worker;

import java.time.Duration;

/**
 * This node's pulls from its jobs' seeds ({@link TaskExecutor#SEED_PULLS} at a time), and the one
 * copy that waits in place for the slot instead of going back to the queue.
 *
 * <p>Why a copy waits in place (issue 20, docs/benchmarks.md "Fan-out"): a copy whose only source
 * is the seed while this node already pulls another object from there used to be deferred, pending
 * again 100 ms later. But a deferred copy's {@code run_after} is then later than that of every copy
 * the node has not claimed yet (their ranks lie in the past), so it came back only once the node
 * had claimed all of those: with its slots full of relays, the node's next seed pull started
 * seconds after its last one ended. At 100 Mbit/s the job's last objects left the seed 3-4 s late,
 * each at the 1/8 of its puller's downlink that TCP gives one of eight copies, and the seed's
 * uplink fell to 7-40 Mbit/s for the job's last 3-5 s. The waiter holds no executor slot while it
 * waits (the node claims other copies meanwhile), wakes the moment this node's seed pull ends, and
 * looks its sources up again then, and every {@link #STEP} meanwhile (another follower may have
 * taken the object from the seed: then it relays it from there).
 */
final class SeedSlot {
  /** How often a waiting copy looks its sources up again while the slot stays taken. */
  static final Duration STEP = Duration.ofMillis(500);

  /** The longest a copy waits in place; then it is deferred as before. */
  static final Duration MAX_WAIT = Duration.ofSeconds(30);

  private final int capacity;
  private int inUse;
  private boolean waiter;

  SeedSlot(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, got " + capacity);
    }
    this.capacity = capacity;
  }

  /** Takes one of the node's seed pulls; false when all are taken. */
  synchronized boolean tryTake() {
    if (inUse >= capacity) {
      return false;
    }
    inUse++;
    return true;
  }

  /** A seed pull ended: wakes the waiter. */
  synchronized void release() {
    if (inUse <= 0) {
      throw new IllegalStateException("no seed pull to release");
    }
    inUse--;
    notifyAll();
  }

  /** Whether every seed pull of this node is taken. */
  synchronized boolean busy() {
    return inUse >= capacity;
  }

  /** Seed pulls running now (for tests and logs). */
  synchronized int inUse() {
    return inUse;
  }

  /** Becomes the node's one waiting copy; false when another copy waits already. */
  synchronized boolean becomeWaiter() {
    if (waiter) {
      return false;
    }
    waiter = true;
    return true;
  }

  /** The waiting copy stopped waiting (it runs, or went back to the queue). */
  synchronized void endWait() {
    waiter = false;
  }

  /**
   * Waits until a seed pull is free or {@code timeout} has passed; true when one is free (it is not
   * taken: the caller looks its sources up again and then takes it with {@link #tryTake}).
   */
  synchronized boolean awaitFree(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (inUse >= capacity) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return true;
  }

  /**
   * Whether a copy that has waited in place for {@code waitedNanos} so far keeps waiting: the wait
   * is for this node's own seed pull, which ends one way or another, but a slot held for more than
   * {@link #MAX_WAIT} (a stalled pull) is no reason to keep a copy out of the queue.
   */
  static boolean keepsWaiting(long waitedNanos) {
    return waitedNanos < MAX_WAIT.toNanos();
  }

  /** How a waiting copy gives its executor slot back to the node, and takes one again. */
  interface Parking {
    /** The copy waits: the node may claim another task in its place. */
    void park();

    /** The copy runs again (the node may run one task over its concurrency until one ends). */
    void unpark();

    /** For nodes and tests that do not hand slots back. */
    Parking NONE =
        new Parking() {
          @Override
          public void park() {}

          @Override
          public void unpark() {}
        };
  }
}

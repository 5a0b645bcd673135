package io.mooncake.dist.worker;

/**
 * A claimed task that chose to wait rather than run now (a copy whose only source is the seed while
 * another follower is already pulling that object from it). Not a failure: the task goes back to
 * the queue without using up an attempt, due again after {@link #DELAY_MS}.
 */
final class TaskDeferred extends Exception {
  /** Long enough for a chunk to reach the follower that is pulling it; short next to a transfer. */
  static final long DELAY_MS = 100;

  TaskDeferred(String reason) {
    super(reason, null, false, false);
  }
}

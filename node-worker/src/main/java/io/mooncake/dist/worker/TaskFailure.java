package io.mooncake.dist.worker;

/**
 * A task attempt that failed; {@code retryable} says whether another attempt may succeed, {@link
 * #sourcesFailed} whether the copy's sources failed it (rather than this node).
 */
class TaskFailure extends Exception {
  private final boolean retryable;

  TaskFailure(String message, boolean retryable) {
    super(message);
    this.retryable = retryable;
  }

  TaskFailure(String message, boolean retryable, Throwable cause) {
    super(message, cause);
    this.retryable = retryable;
  }

  boolean retryable() {
    return retryable;
  }

  /** Whether every source the copy tried failed it: their fault, not this node's. */
  boolean sourcesFailed() {
    return this instanceof SourcesFailed;
  }

  /** Every source a copy tried failed it (refused, broke off, sent bytes that did not match). */
  static final class SourcesFailed extends TaskFailure {
    SourcesFailed(String message) {
      super(message, true);
    }
  }
}

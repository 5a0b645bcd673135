package io.mooncake.dist.worker;

/** A task attempt that failed; {@code retryable} says whether another attempt may succeed. */
final class TaskFailure extends Exception {
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
}

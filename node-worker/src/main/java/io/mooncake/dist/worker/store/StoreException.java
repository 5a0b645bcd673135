package io.mooncake.dist.worker.store;

/**
 * A node-caused or source-caused failure of a store operation.
 *
 * <p>{@link #retryable()} tells the task runner whether another attempt is worth it: {@code true}
 * for transient trouble (an I/O hiccup, a dropped connection, an HTTP 5xx), {@code false} for
 * permanent trouble that a retry would only repeat (a missing file, HTTP 404, a size or checksum
 * mismatch, a full disk). The message names the file or URL and the cause in plain words, because
 * it ends up in the task's error column for an operator to read.
 */
public final class StoreException extends Exception {
  private static final long serialVersionUID = 1L;

  private final boolean retryable;

  public StoreException(String msg, boolean retryable) {
    super(msg);
    this.retryable = retryable;
  }

  public StoreException(String msg, boolean retryable, Throwable cause) {
    super(msg, cause);
    this.retryable = retryable;
  }

  /** Whether another attempt of the same operation may succeed. */
  public boolean retryable() {
    return retryable;
  }
}

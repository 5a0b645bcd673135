package io.mooncake.dist.scheduler.state;

/**
 * How many tasks of one type one node has in each state, and the error of a failed one. A retried
 * task is back in {@code pending}, so {@code failed} counts only final failures.
 */
public record TaskCounts(
    int pending, int processing, int succeeded, int failed, int canceled, String lastError) {
  public static final TaskCounts NONE = new TaskCounts(0, 0, 0, 0, 0, null);

  public int total() {
    return pending + processing + succeeded + failed + canceled;
  }

  public boolean none() {
    return total() == 0;
  }

  public int open() {
    return pending + processing;
  }

  public TaskCounts plus(TaskCounts o) {
    return new TaskCounts(
        pending + o.pending,
        processing + o.processing,
        succeeded + o.succeeded,
        failed + o.failed,
        canceled + o.canceled,
        lastError != null ? lastError : o.lastError);
  }
}

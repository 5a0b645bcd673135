package io.mooncake.dist.scheduler.store;

import io.mooncake.dist.scheduler.domain.JobStatus;

/** What {@link JobCancel#cancel(String)} found and did. */
public sealed interface CancelOutcome {
  /** No job has that id. */
  record NotFound() implements CancelOutcome {}

  /** The job had already ended in {@code status}; nothing was written. */
  record AlreadyTerminal(JobStatus status) implements CancelOutcome {}

  /**
   * The job was in {@code previous} and is now canceled; {@code tasksCanceled} pending tasks were
   * canceled and {@code placementsFailed} unstaged placements failed.
   */
  record Canceled(JobStatus previous, int tasksCanceled, int placementsFailed)
      implements CancelOutcome {}
}

package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;
import io.mooncake.dist.scheduler.domain.TaskState;
import io.mooncake.dist.scheduler.state.JobTransitions;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * Cancels a job on request, in one transaction under the job's row lock (the lock the scheduler
 * takes with {@code SKIP LOCKED}, so no evaluation of the job runs meanwhile, and none follows: the
 * scheduler only evaluates active jobs).
 *
 * <p>The job becomes {@code canceled}; its pending tasks are canceled; placements already staged
 * keep their copy and stay {@code staged}; placements not yet staged fail with {@value
 * #PLACEMENT_ERROR}; placements that had already failed keep their own error. Tasks a worker is
 * running are not interrupted: the worker's lease-guarded writes still land on the task row, but
 * its attempt is made the last one, so a failure or a lapsed lease fails the task instead of
 * queueing it again for a job nobody wants.
 */
public final class JobCancel {
  public static final String JOB_ERROR = "canceled by request";
  public static final String PLACEMENT_ERROR = "canceled before staging";

  private final DSLContext dsl;

  public JobCancel(DSLContext dsl) {
    this.dsl = dsl;
  }

  /** Deadlocks survived per cancel before the error goes to the caller. */
  static final int DEADLOCK_RETRIES = 3;

  private static final String DEADLOCK_DETECTED = "40P01";

  /**
   * Cancels {@code jobId}. Workers update several of the job's task rows per statement (batched
   * progress, lease renewals) in an order of their own while the cancel updates all of them, so
   * PostgreSQL may break a lock cycle by aborting the cancel (seen in {@code JobCancelApiTest}
   * under load). The aborted transaction rolled back whole, so it is simply run again.
   */
  public CancelOutcome cancel(String jobId) {
    for (int retry = 0; ; retry++) {
      try {
        return cancelOnce(jobId);
      } catch (DataAccessException e) {
        if (retry >= DEADLOCK_RETRIES || !DEADLOCK_DETECTED.equals(e.sqlState())) {
          throw e;
        }
      }
    }
  }

  private CancelOutcome cancelOnce(String jobId) {
    return dsl.transactionResult(
        cfg -> {
          DSLContext tx = cfg.dsl();
          // Waits (no SKIP LOCKED) for a scheduler pass holding the row, then reads the committed
          // state.
          String status =
              tx.select(JOBS.STATUS)
                  .from(JOBS)
                  .where(JOBS.JOB_ID.eq(jobId))
                  .forUpdate()
                  .fetchOne(JOBS.STATUS);
          if (status == null) {
            return new CancelOutcome.NotFound();
          }
          JobStatus previous = JobStatus.fromWire(status);
          if (previous.terminal()) {
            return new CancelOutcome.AlreadyTerminal(previous);
          }
          tx.update(JOBS)
              .set(JOBS.STATUS, JobTransitions.require(previous, JobStatus.CANCELED).wire())
              .set(JOBS.LAST_ERROR, JOB_ERROR)
              .set(JOBS.FINISHED_AT, DSL.currentOffsetDateTime())
              .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
              .where(JOBS.JOB_ID.eq(jobId))
              .execute();
          int tasks =
              tx.update(TASKS)
                  .set(TASKS.STATE, TaskState.CANCELED.wire())
                  .set(TASKS.FINISHED_AT, DSL.currentOffsetDateTime())
                  .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
                  .where(TASKS.JOB_ID.eq(jobId))
                  .and(TASKS.STATE.eq(TaskState.PENDING.wire()))
                  .execute();
          tx.update(TASKS)
              .set(TASKS.MAX_ATTEMPTS, TASKS.ATTEMPTS)
              .where(TASKS.JOB_ID.eq(jobId))
              .and(TASKS.STATE.eq(TaskState.PROCESSING.wire()))
              .and(TASKS.ATTEMPTS.gt(0))
              .execute();
          int placements =
              tx.update(PLACEMENTS)
                  .set(PLACEMENTS.STATE, PlacementState.FAILED.wire())
                  .set(PLACEMENTS.LAST_ERROR, PLACEMENT_ERROR)
                  .set(PLACEMENTS.CHECKSUM_VERIFIED, false)
                  .set(PLACEMENTS.LOCAL_PATH, (String) null)
                  .set(PLACEMENTS.UPDATED_AT, DSL.currentOffsetDateTime())
                  .where(PLACEMENTS.JOB_ID.eq(jobId))
                  .and(
                      PLACEMENTS.STATE.in(
                          JobTransitions.sourcesOf(PlacementState.FAILED).stream()
                              .map(PlacementState::wire)
                              .toList()))
                  .execute();
          return new CancelOutcome.Canceled(previous, tasks, placements);
        });
  }
}

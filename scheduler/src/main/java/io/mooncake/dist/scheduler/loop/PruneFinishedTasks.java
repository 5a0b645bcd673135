package io.mooncake.dist.scheduler.loop;

import java.time.Duration;
import java.util.List;
import org.jooq.DSLContext;

/**
 * Table hygiene: deletes the task rows (and, by cascade, their {@code task_attempts}) of jobs that
 * finished more than {@code retention} ago, in batches of at most {@link #BATCH} rows, one short
 * transaction each, so the hot tables hold little more than live work.
 *
 * <p>What remains of a pruned job: its {@code jobs} row (status, times, last error), its {@code
 * job_files}, {@code job_objects} and {@code placements}, its {@code placement_bytes} (so the
 * snapshot is unchanged), and {@code task_history}: per (job, node, task type, final state) the
 * number of tasks, attempts, failed attempts, bytes, transfer seconds, first creation, last finish
 * and the last error. Individual task rows and attempt messages are gone.
 *
 * <p>Several masters may prune at once: rows are taken with {@code FOR UPDATE SKIP LOCKED} and the
 * history rows are added to, never overwritten.
 */
public final class PruneFinishedTasks {
  /** Rows deleted per transaction (as River does). */
  public static final int BATCH = 10_000;

  private static final int JOBS_PER_ROUND = 100;

  /** One batch: delete, then fold what was deleted into task_history, in one statement. */
  private static final String PRUNE_BATCH =
      """
      WITH victims AS (
        SELECT t.task_id
          FROM tasks t
         WHERE t.job_id = ?
         LIMIT ?
           FOR UPDATE SKIP LOCKED),
      failures AS (
        SELECT a.task_id, count(*) AS failed
          FROM task_attempts a
          JOIN victims v ON v.task_id = a.task_id
         WHERE a.outcome IN ('failed', 'retry', 'lease_expired')
         GROUP BY a.task_id),
      gone AS (
        DELETE FROM tasks t
         USING victims v
         WHERE t.task_id = v.task_id
        RETURNING t.*),
      summarized AS (
        INSERT INTO task_history AS h (job_id, node_id, task_type, state, tasks, attempts, failed_attempts, bytes_total,
                                       bytes_done, timed_bytes, timed_seconds, first_created_at, last_finished_at,
                                       last_error)
        SELECT g.job_id, g.node_id, g.task_type, g.state, count(*), sum(g.attempts), coalesce(sum(f.failed), 0),
               sum(g.bytes_total), sum(g.bytes_done),
               coalesce(sum(g.bytes_total) FILTER (WHERE g.finished_at > g.started_at), 0),
               coalesce(sum(extract(epoch FROM g.finished_at - g.started_at)) FILTER (WHERE g.finished_at > g.started_at), 0),
               min(g.created_at), max(g.finished_at),
               (array_agg(g.last_error ORDER BY g.finished_at DESC NULLS LAST) FILTER (WHERE g.last_error IS NOT NULL))[1]
          FROM gone g
          LEFT JOIN failures f ON f.task_id = g.task_id
         GROUP BY g.job_id, g.node_id, g.task_type, g.state
         ORDER BY g.job_id, g.node_id, g.task_type, g.state
        ON CONFLICT (job_id, node_id, task_type, state) DO UPDATE SET
               tasks = h.tasks + excluded.tasks,
               attempts = h.attempts + excluded.attempts,
               failed_attempts = h.failed_attempts + excluded.failed_attempts,
               bytes_total = h.bytes_total + excluded.bytes_total,
               bytes_done = h.bytes_done + excluded.bytes_done,
               timed_bytes = h.timed_bytes + excluded.timed_bytes,
               timed_seconds = h.timed_seconds + excluded.timed_seconds,
               first_created_at = least(h.first_created_at, excluded.first_created_at),
               last_finished_at = greatest(h.last_finished_at, excluded.last_finished_at),
               last_error = CASE WHEN excluded.last_error IS NOT NULL
                                  AND (h.last_finished_at IS NULL OR excluded.last_finished_at >= h.last_finished_at)
                                 THEN excluded.last_error ELSE coalesce(h.last_error, excluded.last_error) END,
               pruned_at = now())
      SELECT count(*) FROM gone
      """;

  private final DSLContext dsl;
  private final Duration retention;
  private final int batch;

  public PruneFinishedTasks(DSLContext dsl, Duration retention) {
    this(dsl, retention, BATCH);
  }

  /** With another batch size, for tests. */
  public PruneFinishedTasks(DSLContext dsl, Duration retention, int batch) {
    if (batch < 1) {
      throw new IllegalArgumentException("batch must be positive, got " + batch);
    }
    this.dsl = dsl;
    this.retention = retention;
    this.batch = batch;
  }

  /**
   * Prunes every finished job past the retention, batch after batch, until none is left.
   *
   * @return task rows deleted
   */
  public long run() {
    long deleted = 0;
    while (true) {
      List<String> jobs = jobsToPrune();
      if (jobs.isEmpty()) {
        return deleted;
      }
      long round = 0;
      for (String jobId : jobs) {
        int n;
        do {
          n = pruneBatch(jobId);
          round += n;
        } while (n == batch);
        dropCounts(jobId);
      }
      deleted += round;
      if (round == 0) {
        // Everything left is locked by another pruning master; it will finish those jobs.
        return deleted;
      }
    }
  }

  /** Finished past the retention and still holding task rows (one index probe per job). */
  private List<String> jobsToPrune() {
    return dsl.resultQuery(
            """
            SELECT j.job_id
              FROM jobs j
             WHERE j.status IN ('completed', 'failed', 'canceled')
               AND j.finished_at < now() - make_interval(secs => ?)
               AND EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = j.job_id)
             ORDER BY j.finished_at
             LIMIT ?
            """,
            retention.toMillis() / 1000.0,
            JOBS_PER_ROUND)
        .fetch(0, String.class);
  }

  /**
   * The job's task counters ({@code task_counts} and {@code task_count_deltas}, V016 and V017),
   * once no task row of it is left: they count nothing any more, and no pass folds a finished job's
   * deltas.
   */
  void dropCounts(String jobId) {
    dsl.execute(
        """
        WITH empty AS (SELECT NOT EXISTS (SELECT 1 FROM tasks WHERE job_id = ?) AS yes),
        deltas AS (DELETE FROM task_count_deltas WHERE job_id = ? AND (SELECT yes FROM empty))
        DELETE FROM task_counts WHERE job_id = ? AND (SELECT yes FROM empty)
        """,
        jobId,
        jobId,
        jobId);
  }

  /** One transaction: at most {@code batch} task rows of the job deleted and summarized. */
  int pruneBatch(String jobId) {
    return dsl.transactionResult(
        cfg -> cfg.dsl().resultQuery(PRUNE_BATCH, jobId, batch).fetchOne(0, Integer.class));
  }
}

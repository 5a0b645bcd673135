-- Report:  stuck_tasks
-- Answers: Which tasks are stuck: processing with an expired lease, or ready to run but unclaimed for longer than :stuck_after (default 5 minutes).
--
-- Columns:
--   problem       'lease expired' or 'pending too long'
--   task_id       the task
--   node_id       node the task belongs to
--   node_live     the node's heartbeat is at most 10 s old (false when the node is not registered)
--   job_id        the job
--   task_type     MODEL_DOWNLOAD, MODEL_VERIFY, REPLICA_COPY or MATERIALIZE
--   object_id     the object for REPLICA_COPY, '' for whole-model tasks
--   state         processing or pending
--   attempts      attempts used so far
--   max_attempts  attempts allowed
--   lease_owner   <node_id>/<instance> holding the lease (processing only)
--   last_error    error of the previous attempt, if any
--   age           now() - created_at
--   overdue       lease expired: now() - lease_expires_at; pending: now() - the moment it became claimable
--
-- Run:
--   psql "$URL" -f ops-sql/reports/stuck_tasks.sql
--   psql "$URL" -v stuck_after='15 minutes' -f ops-sql/reports/stuck_tasks.sql
--
-- A pending task becomes claimable at greatest(run_after, updated_at): run_after carries the retry
-- backoff, and updated_at is when it last went back to pending (a released lease keeps its old
-- run_after). A task still inside its backoff is waiting by design, not stuck.
-- Each branch reads only a partial index (tasks_leased_idx, V024, over the processing tasks with a
-- lease owner, which every claimed task has; tasks_claim_idx), so the report stays cheap however
-- many finished tasks the table holds. At most 1000 rows, most overdue first; queue_depth has the totals.

\if :{?stuck_after}
\else
    \set stuck_after '5 minutes'
\endif

SELECT
    s.problem,
    s.task_id,
    s.node_id,
    coalesce(n.heartbeat_at >= now() - interval '10 seconds', false) AS node_live,
    s.job_id,
    s.task_type,
    s.object_id,
    s.state,
    s.attempts,
    s.max_attempts,
    s.lease_owner,
    s.last_error,
    date_trunc('second', now() - s.created_at) AS age,
    date_trunc('second', s.overdue) AS overdue
FROM (
    SELECT
        'lease expired' AS problem,
        t.*,
        now() - t.lease_expires_at AS overdue
    FROM tasks AS t
    WHERE t.state = 'processing'
        AND t.lease_owner IS NOT NULL
        AND t.lease_expires_at < now()
    UNION ALL
    SELECT
        'pending too long' AS problem,
        t.*,
        now() - greatest(t.run_after, t.updated_at) AS overdue
    FROM tasks AS t
    WHERE t.state = 'pending'
        AND greatest(t.run_after, t.updated_at) < now() - :'stuck_after'::interval
) AS s
LEFT JOIN nodes AS n
    ON n.node_id = s.node_id
ORDER BY s.overdue DESC, s.task_id
LIMIT 1000;

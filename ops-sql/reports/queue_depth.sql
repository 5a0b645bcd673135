-- Report:  queue_depth
-- Answers: How many tasks each node has per task type and state, and how long its oldest pending task has existed.
--
-- Columns:
--   node_id             node the tasks are queued for
--   task_type           MODEL_DOWNLOAD, MODEL_VERIFY, REPLICA_COPY or MATERIALIZE
--   state               pending, processing, succeeded, failed or canceled
--   tasks               number of tasks in that (node, type, state)
--   oldest_pending_age  now() - created_at of the oldest pending task in the group (NULL for other states)
--
-- Run:
--   psql "$URL" -f ops-sql/reports/queue_depth.sql
--
-- Age counts from created_at, not from the last retry, so a task that keeps bouncing between
-- pending and processing still shows how long its work has been outstanding. stuck_tasks is the
-- report for "ready but nobody claims it".
-- One sequential pass with a hash aggregate: the rows are grouped, never sorted; only the few
-- groups are ordered, by lifecycle rather than alphabetically.

SELECT
    t.node_id,
    t.task_type,
    t.state,
    count(*) AS tasks,
    date_trunc('second', now() - min(t.created_at) FILTER (WHERE t.state = 'pending')) AS oldest_pending_age
FROM tasks AS t
GROUP BY t.node_id, t.task_type, t.state
ORDER BY
    t.node_id,
    array_position(ARRAY['MODEL_DOWNLOAD', 'MODEL_VERIFY', 'REPLICA_COPY', 'MATERIALIZE'], t.task_type::text),
    array_position(ARRAY['pending', 'processing', 'succeeded', 'failed', 'canceled'], t.state::text);

-- Report:  node_throughput
-- Answers: How many model bytes each node has staged in the last hour and in all, how many tasks it completed, how fast its transfers ran, and whether it is live.
--
-- Columns:
--   node_id          registered node, or a node id that only appears in tasks
--   live             heartbeat_at is at most 10 s old
--   heartbeat_age    now() - heartbeat_at (NULL when the node is not registered)
--   bytes_last_hour  bytes_total of succeeded MODEL_DOWNLOAD and REPLICA_COPY tasks finished in the last hour
--   bytes_all_time   the same, over all time
--   tasks_succeeded  succeeded tasks of every type
--   avg_mib_per_s    those staged bytes / the time their tasks ran (finished_at - started_at), in MiB/s
--
-- Run:
--   psql "$URL" -f ops-sql/reports/node_throughput.sql
--
-- Only MODEL_DOWNLOAD and REPLICA_COPY write model bytes onto a node; MODEL_VERIFY and
-- MATERIALIZE re-read bytes that are already there, so counting them would double the volume.
-- avg_mib_per_s is byte-weighted (total bytes / total task seconds), so one tiny fast copy does
-- not skew it; it is a per-task transfer rate, and a node running tasks in parallel moves more
-- than this per wall-clock second. started_at is the start of the successful attempt.
-- One pass over the succeeded tasks with a hash aggregate; FULL JOIN keeps idle registered nodes
-- and task rows whose node has been removed.

WITH done AS (
    SELECT
        t.node_id,
        count(*) AS tasks_succeeded,
        sum(t.bytes_total) FILTER (WHERE t.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')) AS bytes_all_time,
        sum(t.bytes_total) FILTER (WHERE t.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
                                     AND t.finished_at >= now() - interval '1 hour') AS bytes_last_hour,
        sum(t.bytes_total) FILTER (WHERE t.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
                                     AND t.finished_at > t.started_at) AS timed_bytes,
        sum(extract(epoch FROM t.finished_at - t.started_at)) FILTER (WHERE t.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
                                                                        AND t.finished_at > t.started_at) AS timed_seconds
    FROM tasks AS t
    WHERE t.state = 'succeeded'
    GROUP BY t.node_id
)
SELECT
    coalesce(n.node_id, d.node_id) AS node_id,
    coalesce(n.heartbeat_at >= now() - interval '10 seconds', false) AS live,
    date_trunc('second', now() - n.heartbeat_at) AS heartbeat_age,
    coalesce(d.bytes_last_hour, 0)::bigint AS bytes_last_hour,
    coalesce(d.bytes_all_time, 0)::bigint AS bytes_all_time,
    coalesce(d.tasks_succeeded, 0) AS tasks_succeeded,
    round(d.timed_bytes / 1048576.0 / nullif(d.timed_seconds, 0), 2) AS avg_mib_per_s
FROM nodes AS n
FULL JOIN done AS d
    ON d.node_id = n.node_id
ORDER BY bytes_last_hour DESC, bytes_all_time DESC, node_id;

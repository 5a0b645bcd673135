-- Report:  inflight_jobs
-- Answers: Which active jobs (planned, seeding, replicating) are the biggest, and how far along each is: placements staged and failed, bytes staged, percent, age.
--
-- Columns:
--   job_id             the job
--   model_id           its model
--   status             planned, seeding or replicating
--   total_bytes        model size (jobs.total_size_bytes)
--   targets            placements (target nodes, the seed included)
--   placements_staged  placements in state staged
--   placements_failed  placements in state failed
--   bytes_staged       bytes on the targets so far, by the snapshot's rule (below)
--   staged_pct         bytes_staged / (total_bytes * targets), in percent
--   age                now() - created_at
--
-- Run:
--   psql "$URL" -f ops-sql/reports/inflight_jobs.sql
--
-- bytes_staged follows GET .../jobs?job_id= exactly, so the two never disagree: per placement, a
-- staged one counts the whole model; any other counts its node's MODEL_DOWNLOAD and REPLICA_COPY
-- tasks of the job (succeeded ones at bytes_total, the rest at bytes_done), capped at the model
-- size; the job's figure is the sum over its placements.
-- The 20 biggest active jobs are picked first through jobs_active_idx, so only their task rows
-- are read (through tasks_job_idx, V004: job_id).

WITH active AS (
    SELECT
        j.job_id,
        j.model_id,
        j.status,
        j.total_size_bytes,
        j.created_at
    FROM jobs AS j
    WHERE j.status IN ('planned', 'seeding', 'replicating')
    ORDER BY j.total_size_bytes DESC, j.created_at, j.job_id
    LIMIT 20
),
node_bytes AS (
    SELECT
        t.job_id,
        t.node_id,
        sum(CASE WHEN t.state = 'succeeded' THEN t.bytes_total ELSE t.bytes_done END) AS bytes
    FROM active AS a
    JOIN tasks AS t
        ON t.job_id = a.job_id
    WHERE t.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
    GROUP BY t.job_id, t.node_id
),
placement_bytes AS (
    SELECT
        p.job_id,
        p.state,
        CASE
            WHEN p.state = 'staged' THEN a.total_size_bytes
            ELSE least(a.total_size_bytes, coalesce(nb.bytes, 0))
        END AS bytes
    FROM active AS a
    JOIN placements AS p
        ON p.job_id = a.job_id
    LEFT JOIN node_bytes AS nb
        ON nb.job_id = p.job_id
        AND nb.node_id = p.node_id
)
SELECT
    a.job_id,
    a.model_id,
    a.status,
    a.total_size_bytes AS total_bytes,
    count(pb.job_id) AS targets,
    count(pb.job_id) FILTER (WHERE pb.state = 'staged') AS placements_staged,
    count(pb.job_id) FILTER (WHERE pb.state = 'failed') AS placements_failed,
    coalesce(sum(pb.bytes), 0)::bigint AS bytes_staged,
    coalesce(round(100.0 * sum(pb.bytes) / nullif(a.total_size_bytes * count(pb.job_id), 0), 1), 0) AS staged_pct,
    date_trunc('second', now() - a.created_at) AS age
FROM active AS a
LEFT JOIN placement_bytes AS pb
    ON pb.job_id = a.job_id
GROUP BY a.job_id, a.model_id, a.status, a.total_size_bytes, a.created_at
ORDER BY a.total_size_bytes DESC, a.created_at, a.job_id;

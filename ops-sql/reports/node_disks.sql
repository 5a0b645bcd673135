-- Report:  node_disks
-- Answers: How full each node's disk is, what its staged models hold, how much of that is pinned, and what it evicted in the last day.
--
-- Columns:
--   node_id          registered node
--   live             heartbeat_at is at most 10 s old
--   capacity_bytes   size of the data directory's file system, as last reported (NULL: never reported)
--   free_bytes       free bytes there, as last reported
--   used_pct         (capacity - free) / capacity, in percent
--   watermarks       the node's high/low eviction watermarks, percent used
--   models           staged (or partly staged) models the node holds
--   held_bytes       their bytes
--   pinned_models    models pinned on the node (held or not)
--   evicted_last_day models evicted in the last 24 hours
--   evicted_bytes_last_day  their bytes
--
-- Run:
--   psql "$URL" -f ops-sql/reports/node_disks.sql
--
-- Reads the node rows, node_models (one row per model a node holds), model_pins and the last day
-- of evictions; fullest disks first.

SELECT
    n.node_id,
    n.heartbeat_at >= now() - interval '10 seconds' AS live,
    n.capacity_bytes,
    n.free_bytes,
    round(100.0 * (n.capacity_bytes - n.free_bytes) / nullif(n.capacity_bytes, 0), 1) AS used_pct,
    n.high_watermark_pct || '/' || n.low_watermark_pct AS watermarks,
    coalesce(m.models, 0) AS models,
    coalesce(m.held_bytes, 0)::bigint AS held_bytes,
    coalesce(p.pinned_models, 0) AS pinned_models,
    coalesce(e.evicted, 0) AS evicted_last_day,
    coalesce(e.evicted_bytes, 0)::bigint AS evicted_bytes_last_day
FROM nodes AS n
LEFT JOIN (SELECT node_id, count(*) AS models, sum(bytes) AS held_bytes
             FROM node_models GROUP BY node_id) AS m
    ON m.node_id = n.node_id
LEFT JOIN (SELECT node_id, count(*) AS pinned_models FROM model_pins GROUP BY node_id) AS p
    ON p.node_id = n.node_id
LEFT JOIN (SELECT node_id, count(*) AS evicted, sum(bytes) AS evicted_bytes
             FROM evictions WHERE evicted_at >= now() - interval '1 day' GROUP BY node_id) AS e
    ON e.node_id = n.node_id
ORDER BY used_pct DESC NULLS LAST, n.node_id;

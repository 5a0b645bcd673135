-- Report:  evictions
-- Answers: Which models the nodes evicted to keep their disks from filling, and why, newest first, within :since (default 7 days).
--
-- Columns:
--   evicted_at   when the node evicted the model
--   node_id      the node
--   model        provider/model_id@revision (format)
--   bytes        bytes the model held on that node when evicted
--   reason       'disk N% used, above the high watermark ...' or 'making room for job J (B bytes)'
--
-- Run:
--   psql "$URL" -f ops-sql/reports/evictions.sql
--   psql "$URL" -v since='1 day' -f ops-sql/reports/evictions.sql
--
-- A node writes one row per eviction in the transaction that withdraws the model's replica rows
-- (V013), so every model that stopped being offered as a copy source is listed here. At most 1000
-- rows; evictions_node_idx keeps the per-node history cheap.

\if :{?since}
\else
    \set since '7 days'
\endif

SELECT
    date_trunc('second', e.evicted_at) AS evicted_at,
    e.node_id,
    e.provider || '/' || e.model_id || '@' || e.revision || ' (' || e.format || ')' AS model,
    e.bytes,
    e.reason
FROM evictions AS e
WHERE e.evicted_at >= now() - :'since'::interval
ORDER BY e.evicted_at DESC, e.eviction_id DESC
LIMIT 1000;

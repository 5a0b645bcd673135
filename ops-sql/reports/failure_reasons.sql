-- Report:  failure_reasons
-- Answers: Why tasks fail: failed attempts and failed tasks grouped by a normalized reason, ranked by count, with an example message and when it was last seen.
--
-- Columns:
--   reason           the message up to its first ': ', with variable parts replaced (see below)
--   failed_attempts  task_attempts rows with outcome failed, retry or lease_expired
--   failed_tasks     tasks now in state failed
--   task_types       task types the reason occurred in
--   example_error    the most recent full message
--   last_seen        when it last occurred (attempt or task finished_at)
--
-- Run:
--   psql "$URL" -f ops-sql/reports/failure_reasons.sql
--
-- Normalization. Worker messages read "<what failed>: <detail>", where the detail is usually a
-- stringified exception or a node-specific cause, so the reason keeps the part before the first
-- ': ' (a URL's '://' is not a split point). In that part, variable tokens are replaced so the
-- same failure on other files, nodes and objects groups together:
--   scheme://...                         -> <url>
--   absolute paths, ids with two '/'     -> <path>   (object ids are <prefix>/<job>/<n>)
--   host:port                            -> <node>
--   name.ext, dir/name.ext               -> <file>
--   8 or more hex digits                 -> <hex>
--   standalone numbers                   -> <n>      (except after "HTTP ": 404 and 503 differ)
-- Digits inside words (sha256, r1) stay. A missing message is '(no message)'.
-- Ranking. Every failure, retried or final, leaves a task_attempts row, so failed_attempts is the
-- complete count and ranks first; failed_tasks (the final outcome) breaks ties. A task that failed
-- for good therefore appears in both columns. At most 50 reasons.
-- Cost: a pass over task_attempts and the failed tasks, hash-grouped; only the failing rows of
-- each group are sorted, to pick the latest example.

WITH failures AS (
    SELECT
        'attempt' AS source,
        t.task_type,
        a.error AS message,
        a.finished_at AS seen_at
    FROM task_attempts AS a
    JOIN tasks AS t
        ON t.task_id = a.task_id
    WHERE a.outcome IN ('failed', 'retry', 'lease_expired')
    UNION ALL
    SELECT
        'task' AS source,
        t.task_type,
        t.last_error AS message,
        coalesce(t.finished_at, t.updated_at) AS seen_at
    FROM tasks AS t
    WHERE t.state = 'failed'
),
normalized AS (
    SELECT
        f.*,
        left(btrim(
            regexp_replace(
            regexp_replace(
            regexp_replace(
            regexp_replace(
            regexp_replace(
            regexp_replace(
            regexp_replace(
                split_part(coalesce(f.message, '(no message)'), ': ', 1),
                '[A-Za-z][A-Za-z0-9+.-]*://[^\s,;)]+', '<url>', 'g'),
                '(^|[\s(])(/|[^\s/]*/[^\s/]*/)[^\s,;)]*', '\1<path>', 'g'),
                '[A-Za-z0-9._-]+:[0-9]{1,5}\M', '<node>', 'g'),
                '(^|[\s(])[A-Za-z0-9_./-]+\.[a-z][a-z0-9]{0,11}(?=[\s,;)]|$)', '\1<file>', 'g'),
                '\m[0-9A-Fa-f]{8,}\M', '<hex>', 'g'),
                '(?<!HTTP )\m[0-9]+\M', '<n>', 'g'),
                '\s+', ' ', 'g')
        ), 200) AS reason
    FROM failures AS f
)
SELECT
    r.reason,
    count(*) FILTER (WHERE r.source = 'attempt') AS failed_attempts,
    count(*) FILTER (WHERE r.source = 'task') AS failed_tasks,
    string_agg(DISTINCT r.task_type, ', ' ORDER BY r.task_type) AS task_types,
    (array_agg(r.message ORDER BY r.seen_at DESC))[1] AS example_error,
    max(r.seen_at) AS last_seen
FROM normalized AS r
GROUP BY r.reason
ORDER BY failed_attempts DESC, failed_tasks DESC, last_seen DESC, r.reason
LIMIT 50;

-- Report:  job_durations
-- Answers: How long completed jobs took (p50 and p95 of finished_at - created_at) per model size bucket, and how many jobs failed per bucket.
--
-- Columns:
--   size_bucket   '<1 GiB', '1-10 GiB', '10-100 GiB' or '>=100 GiB' of total_size_bytes (lower bound inclusive)
--   completed     completed jobs in the bucket
--   p50_duration  median of finished_at - created_at over those jobs, to the second
--   p95_duration  95th percentile of the same, to the second
--   failed        failed jobs in the bucket
--
-- Run:
--   psql "$URL" -f ops-sql/reports/job_durations.sql
--
-- Percentiles are continuous (percentile_cont): they interpolate between the two nearest jobs,
-- which reads better than jumping from job to job when a bucket has few jobs.
-- Every bucket is listed, empty ones with 0 and NULL, so the table shape never changes.
-- Canceled jobs are neither a duration nor a failure and are left out.

WITH buckets (ordinal, size_bucket, min_bytes, max_bytes) AS (
    VALUES
        (1, '<1 GiB', 0::bigint, 1073741824::bigint),
        (2, '1-10 GiB', 1073741824::bigint, 10737418240::bigint),
        (3, '10-100 GiB', 10737418240::bigint, 107374182400::bigint),
        (4, '>=100 GiB', 107374182400::bigint, NULL::bigint)
),
finished AS (
    SELECT
        j.total_size_bytes,
        j.status,
        j.finished_at - j.created_at AS duration
    FROM jobs AS j
    WHERE j.status IN ('completed', 'failed')
)
SELECT
    b.size_bucket,
    count(f.status) FILTER (WHERE f.status = 'completed') AS completed,
    date_trunc('second', percentile_cont(0.5) WITHIN GROUP (ORDER BY f.duration) FILTER (WHERE f.status = 'completed')) AS p50_duration,
    date_trunc('second', percentile_cont(0.95) WITHIN GROUP (ORDER BY f.duration) FILTER (WHERE f.status = 'completed')) AS p95_duration,
    count(f.status) FILTER (WHERE f.status = 'failed') AS failed
FROM buckets AS b
LEFT JOIN finished AS f
    ON f.total_size_bytes >= b.min_bytes
    AND (b.max_bytes IS NULL OR f.total_size_bytes < b.max_bytes)
GROUP BY b.ordinal, b.size_bucket
ORDER BY b.ordinal;

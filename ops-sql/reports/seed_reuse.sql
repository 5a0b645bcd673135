-- Report:  seed_reuse
-- Answers: How often a job's seed reused a model it already held (MODEL_VERIFY without MODEL_DOWNLOAD, a hit) instead of downloading it (a miss), overall and per model.
--
-- Columns:
--   model_id  the model, or '(all models)' for the overall row (listed first)
--   jobs      jobs whose seed has a MODEL_VERIFY or MODEL_DOWNLOAD task
--   hits      jobs with a MODEL_VERIFY and no MODEL_DOWNLOAD on the seed
--   misses    jobs with a MODEL_DOWNLOAD on the seed (including a download after a failed verify)
--   hit_pct   hits / jobs, in percent (NULL when there are no jobs; the overall row is always there)
--
-- Run:
--   psql "$URL" -f ops-sql/reports/seed_reuse.sql
--
-- A failed verification falls back to a download, so "no download" is what makes a hit; a verify
-- still running counts as a hit until a fallback download appears. Jobs whose seed has no task
-- yet are not counted either way.
-- Each job costs two probes of an index on (job_id, node_id, ...) (tasks_one_per_object, partial
-- since V004 but covering these task types, or tasks_job_idx),
-- never a scan of the task table. MATERIALIZED so each probe runs once per job, not once more for
-- every place the outer query reads its result.

WITH seeded AS MATERIALIZED (
    SELECT
        j.model_id,
        EXISTS (
            SELECT 1
            FROM tasks AS t
            WHERE t.job_id = j.job_id
                AND t.node_id = j.seed_node_id
                AND t.task_type = 'MODEL_VERIFY'
        ) AS verified,
        EXISTS (
            SELECT 1
            FROM tasks AS t
            WHERE t.job_id = j.job_id
                AND t.node_id = j.seed_node_id
                AND t.task_type = 'MODEL_DOWNLOAD'
        ) AS downloaded
    FROM jobs AS j
)
SELECT
    CASE WHEN grouping(s.model_id) = 1 THEN '(all models)' ELSE s.model_id END AS model_id,
    count(*) AS jobs,
    count(*) FILTER (WHERE s.verified AND NOT s.downloaded) AS hits,
    count(*) FILTER (WHERE s.downloaded) AS misses,
    round(100.0 * count(*) FILTER (WHERE s.verified AND NOT s.downloaded) / nullif(count(*), 0), 1) AS hit_pct
FROM seeded AS s
WHERE s.verified
    OR s.downloaded
GROUP BY GROUPING SETS ((), (s.model_id))
ORDER BY grouping(s.model_id) DESC, jobs DESC, model_id;

-- A node's claim, planned once per server connection (issue 19).
--
-- The claim (take up to p_limit of a node's ready tasks, and look up each claimed copy's sources in
-- the same statement) was SQL text in TaskQueue. Alone it settled on a generic plan after five
-- custom ones; joined to a node's successes in one statement (TaskQueue.succeedAndClaim, session
-- 13) it never did: the array arguments and the limit make every custom plan look cheaper than the
-- generic one. At 100 simulated nodes through PgBouncer (bench/fleet.sh, pg_stat_statements) that
-- statement was planned 2,707 times in a job at 5.3 ms a plan, 14 s of Postgres CPU. As a PL/pgSQL
-- function with a forced generic plan (as copy_sources, V015, and mooncake_succeed, V018) the
-- claim is planned once per server connection; the statements that call it plan a function scan.
-- The generic plan reads the ready rows through tasks_claim_idx whatever the limit and however
-- stale the statistics (QueuePlanTest, on the plan the function runs, through auto_explain).
--
-- The ready rows: the node's pending tasks due now, oldest first, locked with SKIP LOCKED in a
-- MATERIALIZED CTE (run exactly once, whatever join the planner builds around it). The update
-- finds them by primary key through an array: as a join, a generic plan scanned the table.
-- Copies are stored without a payload (V004): theirs is built here from the job, the object's range
-- and file and the digest recorded at release, four primary-key probes a copy.
--
-- With p_lookup, each claimed copy of a released object gets its sources (copy_sources, with the
-- lookup's arguments) and the first one other than the seed, not already held by this node, is
-- named as the copy's source in its row. Without it (TaskQueue.claim) the lookup columns are null.
--
-- Answers one row per (claimed task, source), unordered: the task's columns, then the lookup's
-- (null when there is none), and the source's rank within its task's lookup (s_ord).
/* [jooq ignore start] */
CREATE FUNCTION mooncake_claim(
    p_node_id varchar, p_limit int, p_owner varchar, p_lease_secs float8, p_lookup boolean,
    p_liveness_secs float8, p_fresh_secs float8, p_avoid_after int, p_avoid_for_secs float8,
    p_sample int, p_lapsed_secs float8)
RETURNS TABLE (
    task_id bigint, job_id text, node_id text, task_type text, object_id text, payload text,
    attempts int, max_attempts int, run_after timestamptz, source_node_id text,
    s_seed text, s_seed_busy boolean, s_followers bigint, s_object_id text, s_node_id text,
    s_size_bytes bigint, s_digest text, s_file_path text, s_file_offset bigint, s_arriving boolean,
    s_struck boolean, s_held boolean, s_ord bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH ready AS MATERIALIZED (
    SELECT t.task_id, t.job_id, t.task_type, t.object_id
      FROM tasks t
     WHERE t.node_id = p_node_id AND t.state = 'pending' AND t.run_after <= now()
     ORDER BY t.run_after, t.task_id
     LIMIT p_limit
       FOR UPDATE SKIP LOCKED),
  looked AS MATERIALIZED (
    SELECT r.task_id AS for_task, s.*
      FROM ready r
      JOIN copy_releases cr ON cr.job_id = r.job_id AND cr.object_id = r.object_id
     CROSS JOIN LATERAL copy_sources(r.job_id, r.object_id, cr.digest, p_node_id, p_liveness_secs, p_fresh_secs,
                                     p_avoid_after, p_avoid_for_secs, p_sample, p_lapsed_secs)
           WITH ORDINALITY AS s (seed, seed_busy, followers, object_id, node_id, size_bytes, digest, file_path,
                                 file_offset, arriving, struck, held, ord)
     WHERE p_lookup AND r.task_type = 'REPLICA_COPY'),
  chosen AS (
    SELECT DISTINCT ON (l.for_task) l.for_task, l.node_id
      FROM looked l
     WHERE l.node_id IS NOT NULL AND l.node_id IS DISTINCT FROM l.seed AND NOT l.held
     ORDER BY l.for_task, l.ord),
  claimed AS (
    UPDATE tasks t
       SET state = 'processing', lease_owner = p_owner,
           lease_expires_at = now() + make_interval(secs => p_lease_secs),
           started_at = now(), updated_at = now(), attempts = t.attempts + 1, bytes_done = 0,
           source_node_id = CASE WHEN p_lookup
                                 THEN (SELECT chosen.node_id FROM chosen WHERE chosen.for_task = t.task_id)
                                 ELSE t.source_node_id END
     WHERE t.task_id = ANY (ARRAY(SELECT r.task_id FROM ready r))
    RETURNING t.task_id, t.job_id, t.node_id, t.task_type, t.object_id,
              coalesce(t.payload, (
                SELECT jsonb_build_object(
                         'model', jsonb_build_object('model_id', j.model_id, 'revision', j.revision, 'format', j.format,
                                                     'provider', j.provider),
                         'files', jsonb_build_array(jsonb_build_object(
                           'file_index', jf.file_index, 'path', jf.path, 'size_bytes', jf.size_bytes, 'sha256', jf.sha256,
                           'download_url', NULL, 'objects', jsonb_build_array(jsonb_build_object(
                             'object_id', jo.object_id, 'chunk_index', jo.chunk_index, 'offset', jo.offset_bytes,
                             'length', jo.length_bytes, 'digest', cr.digest)))))
                  FROM jobs j
                  JOIN job_objects jo ON jo.job_id = j.job_id AND jo.object_id = t.object_id
                  JOIN job_files jf ON jf.job_id = jo.job_id AND jf.file_index = jo.file_index
                  LEFT JOIN copy_releases cr ON cr.job_id = jo.job_id AND cr.object_id = jo.object_id
                 WHERE j.job_id = t.job_id))::text AS payload,
              t.attempts, t.max_attempts, t.run_after, t.source_node_id)
  SELECT c.task_id, c.job_id::text, c.node_id::text, c.task_type::text, c.object_id::text, c.payload,
         c.attempts, c.max_attempts, c.run_after, c.source_node_id::text,
         l.seed::text, l.seed_busy, l.followers, l.object_id::text, l.node_id::text, l.size_bytes, l.digest::text,
         l.file_path::text, l.file_offset, l.arriving, l.struck, l.held, l.ord
    FROM claimed c
    LEFT JOIN looked l ON l.for_task = c.task_id;
END
$$;
/* [jooq ignore stop] */

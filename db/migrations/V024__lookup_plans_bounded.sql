-- The copy-source lookup reads a bounded number of running copies, whatever the statistics say
-- (issue 19).
--
-- copy_sources (V022) runs with a forced generic plan, made once per server connection, often when
-- a job starts and no task is processing yet. The statistics then call the partial indexes over
-- processing tasks empty, and a walk of a whole "empty" index costs the planner as little as a
-- probe, so which one it takes is a tie. The plan bench/fleet.sh's connections ran (auto_explain,
-- N = 100, mid-job) answered "is another node pulling this object from the seed" by walking all of
-- tasks_reading_from_idx with a filter (647 rows read for none kept, 2.7 ms of a 5.5 ms lookup: the
-- seed came from a join, so it could not be an index condition), and "does the asking copy run"
-- the same way; LookupPlanTest's stale statistics gave a walk of tasks_running_object_idx for each
-- candidate's in-flight count instead. Every processing task of every job, 8,000 at N = 1,000,
-- read several times per copy.
--
-- Now each question has exactly one index that can answer it, with a condition, because each
-- partial index's predicate names something only its own questions imply:
--   tasks_reading_from_idx (source_node_id), rows with a source: "who reads from this node"
--     (a candidate's in-flight count, "the seed serves this object", NodeDisks' pins, the seed pull);
--   tasks_running_object_idx (object_id, job_id, node_id), copies: "who receives this object"
--     and "does the asking copy run";
--   tasks_leased_idx (task_id), rows with a lease owner: the lease rescuer's walk, which no lookup
--     can take (lease_owner is set by the claim and never by a renewal, so renewals stay HOT).
-- The lookup reads the seed first into a variable (an index condition, not a join), asks "serves
-- the seed" without the task type and "receiving" without a strict condition on the source.
DROP INDEX tasks_reading_from_idx;
CREATE INDEX tasks_reading_from_idx ON tasks (source_node_id)
    WHERE state = 'processing' AND source_node_id IS NOT NULL;
DROP INDEX tasks_running_object_idx;
CREATE INDEX tasks_running_object_idx ON tasks (object_id, job_id, node_id)
    WHERE state = 'processing' AND task_type = 'REPLICA_COPY';
CREATE INDEX tasks_leased_idx ON tasks (task_id) WHERE state = 'processing' AND lease_owner IS NOT NULL;

/* [jooq ignore start] */
CREATE OR REPLACE FUNCTION copy_sources(
    p_job_id varchar, p_object_id varchar, p_digest varchar, p_node_id varchar,
    p_liveness_secs float8, p_fresh_secs float8,
    p_avoid_after int, p_avoid_for_secs float8, p_sample int, p_lapsed_secs float8)
RETURNS TABLE (
    seed text, seed_busy boolean, followers bigint, object_id text, node_id text, size_bytes bigint,
    digest text, file_path text, file_offset bigint, arriving boolean, struck boolean, held boolean)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  v_seed varchar;
BEGIN
  SELECT j.seed_node_id INTO v_seed FROM jobs j WHERE j.job_id = p_job_id;
  RETURN QUERY
  WITH job AS (
    SELECT v_seed AS seed,
           (SELECT count(*) FROM (SELECT 1 FROM placements p WHERE p.job_id = p_job_id LIMIT 3) two) - 1 AS followers),
  -- The asking copy's own stream, if it runs (a later round of a running copy): its readers
  -- started after it, so a source started before it is never one of them or fed by one.
  me AS (
    SELECT coalesce(max(t.started_at), 'infinity'::timestamptz) AS started_at,
           coalesce(max(t.task_id), 0) AS task_id
      FROM tasks t
     WHERE t.object_id = p_object_id AND t.job_id = p_job_id AND t.node_id = p_node_id
       AND t.task_type = 'REPLICA_COPY' AND t.state = 'processing'),
  busy AS (
    SELECT EXISTS (
             SELECT 1
               FROM tasks t
              WHERE t.state = 'processing' AND t.source_node_id = v_seed
                AND t.object_id = p_object_id AND t.node_id <> p_node_id
                AND t.updated_at > now() - make_interval(secs => p_fresh_secs)) AS seed_busy),
  -- Holders on the ring after the asking node, then from the start of the ring up to it.
  holders AS (
    SELECT * FROM (
      (SELECT r.object_id, r.node_id, r.size_bytes, r.digest, r.file_path, r.file_offset, 0 AS lap
         FROM object_replicas r
         JOIN nodes n ON n.node_id = r.node_id
        WHERE r.object_id = p_object_id AND r.node_id > p_node_id AND r.digest = p_digest
          AND n.heartbeat_at > now() - make_interval(secs => p_lapsed_secs)
        ORDER BY r.node_id LIMIT p_sample)
      UNION ALL
      (SELECT r.object_id, r.node_id, r.size_bytes, r.digest, r.file_path, r.file_offset, 1
         FROM object_replicas r
         JOIN nodes n ON n.node_id = r.node_id
        WHERE r.object_id = p_object_id AND r.node_id < p_node_id AND r.digest = p_digest
          AND n.heartbeat_at > now() - make_interval(secs => p_lapsed_secs)
        ORDER BY r.node_id LIMIT p_sample)) ring
     ORDER BY lap, node_id LIMIT p_sample),
  -- Followers receiving it right now, from any source, that started before the asking copy.
  receiving AS (
    SELECT * FROM (
      (SELECT a.object_id, a.node_id, a.bytes_total, a.source_node_id, 0 AS lap
         FROM me, tasks a
         JOIN nodes n ON n.node_id = a.node_id
        WHERE a.state = 'processing' AND a.object_id = p_object_id AND a.job_id = p_job_id
          AND a.node_id > p_node_id AND a.task_type = 'REPLICA_COPY'
          AND a.updated_at > now() - make_interval(secs => p_fresh_secs)
          AND n.heartbeat_at > now() - make_interval(secs => p_liveness_secs)
          AND coalesce(a.source_node_id, p_node_id) <> p_node_id
          AND (a.started_at, a.task_id) < (me.started_at, me.task_id)
          AND NOT EXISTS (SELECT 1 FROM object_replicas m
                           WHERE m.object_id = a.object_id AND m.node_id = a.node_id)
        ORDER BY a.node_id LIMIT p_sample)
      UNION ALL
      (SELECT a.object_id, a.node_id, a.bytes_total, a.source_node_id, 1
         FROM me, tasks a
         JOIN nodes n ON n.node_id = a.node_id
        WHERE a.state = 'processing' AND a.object_id = p_object_id AND a.job_id = p_job_id
          AND a.node_id < p_node_id AND a.task_type = 'REPLICA_COPY'
          AND a.updated_at > now() - make_interval(secs => p_fresh_secs)
          AND n.heartbeat_at > now() - make_interval(secs => p_liveness_secs)
          AND coalesce(a.source_node_id, p_node_id) <> p_node_id
          AND (a.started_at, a.task_id) < (me.started_at, me.task_id)
          AND NOT EXISTS (SELECT 1 FROM object_replicas m
                           WHERE m.object_id = a.object_id AND m.node_id = a.node_id)
        ORDER BY a.node_id LIMIT p_sample)) ring
     ORDER BY lap, node_id LIMIT p_sample)
  SELECT job.seed::text, busy.seed_busy, job.followers, h.object_id::text, h.node_id::text,
         h.size_bytes, h.digest::text, h.file_path::text, h.file_offset, h.arriving, h.struck, mine.held
    FROM job
   CROSS JOIN busy
   CROSS JOIN (SELECT EXISTS (SELECT 1 FROM object_replicas r
                               WHERE r.object_id = p_object_id AND r.node_id = p_node_id
                                 AND r.digest = p_digest) AS held) mine
    LEFT JOIN LATERAL (
      SELECT c.*,
             (SELECT count(*) FROM tasks t
               WHERE t.state = 'processing' AND t.source_node_id = c.node_id) AS in_flight
        FROM (SELECT * FROM (
      SELECT h.object_id, h.node_id, h.size_bytes, h.digest, h.file_path, h.file_offset, false AS arriving,
             n.heartbeat_at <= now() - make_interval(secs => p_liveness_secs) AS late,
             n.serve_failures > 0 AS struck,
             coalesce(n.serve_failures >= p_avoid_after
                      AND n.serve_failed_at > now() - make_interval(secs => p_avoid_for_secs), false) AS avoided
        FROM holders h
        JOIN nodes n ON n.node_id = h.node_id
      UNION ALL
      SELECT a.object_id, a.node_id, a.bytes_total, p_digest::varchar, NULL, 0::bigint, true, false,
             n.serve_failures > 0,
             coalesce(n.serve_failures >= p_avoid_after
                      AND n.serve_failed_at > now() - make_interval(secs => p_avoid_for_secs), false)
        FROM receiving a
        JOIN nodes n ON n.node_id = a.node_id) u
       ORDER BY u.late, u.avoided, random()
       LIMIT p_sample) c) h ON true
   ORDER BY h.late, h.avoided, h.in_flight, h.arriving, random();
END
$$;
/* [jooq ignore stop] */

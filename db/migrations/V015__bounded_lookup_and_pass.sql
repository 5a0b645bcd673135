-- The per-copy source lookup (copy_sources, V012) at a cost that no longer grows with the number of
-- nodes (issue 19). Three parts of it read every row of their kind for every copy:
--   * the job's follower count counted every placement (N rows), where the worker only asks
--     whether there is more than one: now counted up to 2;
--   * the holders: every replica of the object (up to N rows, each joined to its node), sorted at
--     random, then cut to the sample; now the sample is the first p_sample live holders after the
--     asking node in node-id order, wrapping around (a ring): an index range scan that stops after
--     p_sample rows. Asking nodes sit all around the ring, so each holder is in about p_sample
--     nodes' windows, and the least busy of the window is still tried first;
--   * the followers receiving the object: every running copy of it (up to N); now the same ring
--     walk over an index on (object_id, job_id, node_id) of running tasks, which replaces V012's
--     (object_id, job_id).
-- At 100 simulated nodes the lookup was the statement with the most Postgres time (bench/fleet.sh,
-- pg_stat_statements.track = all); at 1,000 each part reads ten times the rows.
--
-- And its plan is kept: PL/pgSQL planned V012's query anew on every call after all (a custom plan
-- for the parameters, 0.3 ms a call at 100 nodes), since Postgres found no generic plan cheaper.
-- Every part of the query is an index probe or a bounded range scan whatever the parameters, so
-- the function forces the generic plan: planned once per server connection.
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
BEGIN
  RETURN QUERY
  WITH job AS (
    SELECT q.job_id, j.seed_node_id AS seed,
           (SELECT count(*) FROM (SELECT 1 FROM placements p WHERE p.job_id = q.job_id LIMIT 3) two) - 1 AS followers
      FROM (SELECT p_job_id AS job_id) q
      LEFT JOIN jobs j ON j.job_id = q.job_id),
  busy AS (
    SELECT EXISTS (
             SELECT 1
               FROM tasks t, job
              WHERE t.state = 'processing' AND t.task_type = 'REPLICA_COPY' AND t.object_id = p_object_id
                AND t.source_node_id = job.seed AND t.node_id <> p_node_id
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
  -- Followers receiving it from a holder right now, on the same ring.
  receiving AS (
    SELECT * FROM (
      (SELECT a.object_id, a.node_id, a.bytes_total, a.source_node_id, 0 AS lap
         FROM tasks a
         JOIN nodes n ON n.node_id = a.node_id
        WHERE a.state = 'processing' AND a.object_id = p_object_id AND a.job_id = p_job_id
          AND a.node_id > p_node_id AND a.task_type = 'REPLICA_COPY'
          AND a.updated_at > now() - make_interval(secs => p_fresh_secs)
          AND n.heartbeat_at > now() - make_interval(secs => p_liveness_secs)
          AND a.source_node_id <> p_node_id
          AND EXISTS (SELECT 1 FROM object_replicas s
                       WHERE s.object_id = a.object_id AND s.node_id = a.source_node_id AND s.digest = p_digest)
          AND NOT EXISTS (SELECT 1 FROM object_replicas m
                           WHERE m.object_id = a.object_id AND m.node_id = a.node_id)
        ORDER BY a.node_id LIMIT p_sample)
      UNION ALL
      (SELECT a.object_id, a.node_id, a.bytes_total, a.source_node_id, 1
         FROM tasks a
         JOIN nodes n ON n.node_id = a.node_id
        WHERE a.state = 'processing' AND a.object_id = p_object_id AND a.job_id = p_job_id
          AND a.node_id < p_node_id AND a.task_type = 'REPLICA_COPY'
          AND a.updated_at > now() - make_interval(secs => p_fresh_secs)
          AND n.heartbeat_at > now() - make_interval(secs => p_liveness_secs)
          AND a.source_node_id <> p_node_id
          AND EXISTS (SELECT 1 FROM object_replicas s
                       WHERE s.object_id = a.object_id AND s.node_id = a.source_node_id AND s.digest = p_digest)
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
             (SELECT count(*) FROM tasks t WHERE t.state = 'processing' AND t.source_node_id = c.node_id) AS in_flight
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

-- The receiving followers' ring walk: running copies of one object of one job in node order.
DROP INDEX tasks_running_object_idx;
CREATE INDEX tasks_running_object_idx ON tasks (object_id, job_id, node_id) WHERE state = 'processing';

-- The scheduler pass reads the first error of each node's failed tasks of a job: failed rows are
-- few, and without an index that read scanned every task of the job (ScheduleJob.taskCounts).
CREATE INDEX tasks_failed_idx ON tasks (job_id, node_id, task_type) WHERE state = 'failed';

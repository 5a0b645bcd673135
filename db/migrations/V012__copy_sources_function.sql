-- The per-copy source lookup (ReplicaCatalog.sources) as a function, so that Postgres plans it once
-- per server connection instead of on every copy. Nodes behind a transaction-mode PgBouncer cannot
-- keep server-side prepared statements (prepareThreshold=0), so each lookup was parsed and planned
-- anew: in bench/fleet.sh at 100 nodes its planning took 4.8 ms a call, 133 of the 205 s of
-- Postgres CPU of the whole job (pg_stat_statements.track_planning). PL/pgSQL keeps the plan of
-- its query for the life of the server connection, which the pooler keeps open (issue 19).
--
-- One row per source (holders, and followers receiving the object from a holder right now), best
-- first, or one row of nulls but the job's answers when there is none. A holder whose heartbeat is
-- late (older than p_liveness_secs but within p_lapsed_secs) is still listed, after every live one:
-- a late heartbeat is no proof of death when the control plane is overloaded (at 1,000 simulated
-- nodes most heartbeats were late while every node still served), and a dead holder costs the copy
-- one failed connection. Receiving followers must be live: their bytes are still on the way. The caller passes the
-- constants (liveness, freshness, avoidance, sample size) so that Java stays their one source.
/* [jooq ignore start] */
CREATE FUNCTION copy_sources(
    p_job_id varchar, p_object_id varchar, p_digest varchar, p_node_id varchar,
    p_liveness_secs float8, p_fresh_secs float8,
    p_avoid_after int, p_avoid_for_secs float8, p_sample int, p_lapsed_secs float8)
RETURNS TABLE (
    seed text, seed_busy boolean, followers bigint, object_id text, node_id text, size_bytes bigint,
    digest text, file_path text, file_offset bigint, arriving boolean, struck boolean, held boolean)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH job AS (
    SELECT q.job_id, j.seed_node_id AS seed,
           (SELECT count(*) FROM placements p WHERE p.job_id = q.job_id) - 1 AS followers
      FROM (SELECT p_job_id AS job_id) q
      LEFT JOIN jobs j ON j.job_id = q.job_id),
  busy AS (
    SELECT EXISTS (
             SELECT 1
               FROM tasks t, job
              WHERE t.state = 'processing' AND t.task_type = 'REPLICA_COPY' AND t.object_id = p_object_id
                AND t.source_node_id = job.seed AND t.node_id <> p_node_id
                AND t.updated_at > now() - make_interval(secs => p_fresh_secs)) AS seed_busy)
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
      SELECT r.object_id, r.node_id, r.size_bytes, r.digest, r.file_path, r.file_offset, false AS arriving,
             n.heartbeat_at <= now() - make_interval(secs => p_liveness_secs) AS late,
             n.serve_failures > 0 AS struck,
             coalesce(n.serve_failures >= p_avoid_after
                      AND n.serve_failed_at > now() - make_interval(secs => p_avoid_for_secs), false) AS avoided
        FROM object_replicas r
        JOIN nodes n ON n.node_id = r.node_id
       WHERE r.object_id = p_object_id AND r.digest = p_digest AND r.node_id <> p_node_id
         AND n.heartbeat_at > now() - make_interval(secs => p_lapsed_secs)
      UNION ALL
      SELECT a.object_id, a.node_id, a.bytes_total, p_digest::varchar, NULL, 0::bigint, true, false,
             n.serve_failures > 0,
             coalesce(n.serve_failures >= p_avoid_after
                      AND n.serve_failed_at > now() - make_interval(secs => p_avoid_for_secs), false)
        FROM tasks a
        JOIN nodes n ON n.node_id = a.node_id
       WHERE a.state = 'processing' AND a.task_type = 'REPLICA_COPY' AND a.object_id = p_object_id
         AND a.job_id = p_job_id AND a.node_id <> p_node_id
         AND a.updated_at > now() - make_interval(secs => p_fresh_secs)
         AND n.heartbeat_at > now() - make_interval(secs => p_liveness_secs)
         AND a.source_node_id <> p_node_id
         AND EXISTS (SELECT 1 FROM object_replicas s
                      WHERE s.object_id = a.object_id AND s.node_id = a.source_node_id AND s.digest = p_digest)
         AND NOT EXISTS (SELECT 1 FROM object_replicas m
                          WHERE m.object_id = a.object_id AND m.node_id = a.node_id)) u
       ORDER BY u.late, u.avoided, random()
       LIMIT p_sample) c) h ON true
   ORDER BY h.late, h.avoided, h.in_flight, h.arriving, random();
END
$$;
/* [jooq ignore stop] */

-- The lookup's followers receiving the object (and its "is the seed's pull taken" check) select the
-- running copies of one object. Without an index on object_id each lookup filtered every running
-- task (tasks_processing_idx) or every task of the job (tasks_one_per_object leads with job_id
-- then node_id): N x concurrency or N x K rows per copy. Partial, like the others: only running
-- rows are in it.
CREATE INDEX tasks_running_object_idx ON tasks (object_id, job_id) WHERE state = 'processing';

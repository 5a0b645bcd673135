-- A source already relaying the object to 8 copies is not offered to a ninth (issue 19).
--
-- bench/fleet.sh at N = 1,000 (B = 16 MiB/s, session 23): the 999 copies of each newly released
-- object start within about 3 s. A copy may read only from copies that started before it (so no two
-- can wait on each other), and its lookup ranks those by load, but in the first second there are
-- one to three: 779 of chunk-0000's copies read from the three earliest, 222 to 304 each, every
-- reader at a 300th of one uplink, for 10-20 minutes, while 800 later copies of the same object
-- relayed to almost nobody. Now copy_sources drops any source other than the seed that is already
-- relaying this object to 8 or more running copies (about what a relay's uplink feeds at the pace
-- the object arrives: each node's 8 slots read one object each); when every sampled source is that
-- busy, the seed alone is offered, so the worker's rules for the seed apply (SourcePlanner: while
-- another follower pulls the object from the seed, the copy is handed back and claimed again 100
-- ms later, with a new start, by when the relays that started meanwhile have room). In a job of at
-- most 8 followers no source can reach the cap (a follower has at most 7 others to feed).
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
  -- Running copies of the object a source other than the seed may feed before it is passed over.
  c_readers CONSTANT bigint := 8;
BEGIN
  SELECT j.seed_node_id INTO v_seed FROM jobs j WHERE j.job_id = p_job_id;
  RETURN QUERY
  WITH job AS (
    SELECT v_seed AS seed,
           (SELECT count(*) FROM (SELECT 1 FROM placements p WHERE p.job_id = p_job_id
                                 ORDER BY p.job_id, p.node_id LIMIT 3) two) - 1 AS followers),
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
  -- Holders on the ring after the asking node, then from the start of the ring up to it; each
  -- holder's liveness read by its key (a join let the plan scan every node, twice a lookup).
  holders AS (
    SELECT * FROM (
      (SELECT r.object_id, r.node_id, r.size_bytes, r.digest, r.file_path, r.file_offset, 0 AS lap
         FROM object_replicas r
        WHERE r.object_id = p_object_id AND r.node_id > p_node_id AND r.digest = p_digest
          AND (SELECT n.heartbeat_at FROM nodes n WHERE n.node_id = r.node_id)
              > now() - make_interval(secs => p_lapsed_secs)
        ORDER BY r.node_id LIMIT p_sample)
      UNION ALL
      (SELECT r.object_id, r.node_id, r.size_bytes, r.digest, r.file_path, r.file_offset, 1
         FROM object_replicas r
        WHERE r.object_id = p_object_id AND r.node_id < p_node_id AND r.digest = p_digest
          AND (SELECT n.heartbeat_at FROM nodes n WHERE n.node_id = r.node_id)
              > now() - make_interval(secs => p_lapsed_secs)
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
     ORDER BY lap, node_id LIMIT p_sample),
  -- The sample, with each source's load: the running copies reading from it, and those reading
  -- this object.
  sampled AS MATERIALIZED (
    SELECT c.*, load.in_flight, load.readers
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
       LIMIT p_sample) c
     CROSS JOIN LATERAL (
       SELECT count(*) AS in_flight, count(*) FILTER (WHERE t.object_id = p_object_id) AS readers
         FROM tasks t
        WHERE t.state = 'processing' AND t.source_node_id = c.node_id) load),
  offered AS (
    SELECT * FROM sampled s WHERE s.readers < c_readers OR s.node_id = v_seed)
  SELECT job.seed::text, busy.seed_busy, job.followers, h.object_id::text, h.node_id::text,
         h.size_bytes, h.digest::text, h.file_path::text, h.file_offset, h.arriving, h.struck, mine.held
    FROM job
   CROSS JOIN busy
   CROSS JOIN (SELECT EXISTS (SELECT 1 FROM object_replicas r
                               WHERE r.object_id = p_object_id AND r.node_id = p_node_id
                                 AND r.digest = p_digest) AS held) mine
    LEFT JOIN LATERAL (
      SELECT * FROM offered
      UNION ALL
      -- Every sampled source already relays the object to c_readers copies: the seed alone.
      SELECT r.object_id, r.node_id, r.size_bytes, r.digest, r.file_path, r.file_offset, false,
             n.heartbeat_at <= now() - make_interval(secs => p_liveness_secs),
             n.serve_failures > 0,
             coalesce(n.serve_failures >= p_avoid_after
                      AND n.serve_failed_at > now() - make_interval(secs => p_avoid_for_secs), false),
             0::bigint, 0::bigint
        FROM object_replicas r
        JOIN nodes n ON n.node_id = r.node_id
       WHERE r.object_id = p_object_id AND r.node_id = v_seed AND r.digest = p_digest
         AND n.heartbeat_at > now() - make_interval(secs => p_lapsed_secs)
         AND NOT EXISTS (SELECT 1 FROM offered)
         AND EXISTS (SELECT 1 FROM sampled)) h ON true
   ORDER BY h.late, h.avoided, h.in_flight, h.arriving, random();
END
$$;
/* [jooq ignore stop] */

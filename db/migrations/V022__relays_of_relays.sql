-- Relays of relays (issue 19): a follower receiving an object is a source whatever its own source
-- is, as long as its copy started before the asking one's (started_at, then task_id).
--
-- V012 counted a receiving follower as a source only when its own source held the object, so a
-- relay chain was at most holder -> receiver -> reader. With F followers and c copies running on
-- each, the objects in flight from the seed are then served to everyone by their pullers alone:
-- a puller's uplink is shared by the F - 1 others, and each follower's c slots are relays capped by
-- those shares. bench/fleet.sh at N = 1,000 (B = 16 MiB/s, 256 objects) moved 200 MiB/s in all,
-- about 1% of the followers' downlinks, until the seed had sent every object once; the job then
-- took another size/rate, hence job_x_ideal ~2 at N >= 100 in every session since 12.
--
-- Why the order: every reader -> source edge now goes from a later-started copy to an earlier one,
-- and an edge is only made at a lookup, so the edges that exist at any time form no cycle, and no
-- two copies can wait on each other. A running copy that looks again (its source failed) keeps its
-- start, so it never picks one of its own readers, nor anything they feed. A copy being claimed
-- has no running row yet: any receiving copy started before now qualifies.
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
  -- The asking copy's own stream, if it runs (a later round of a running copy): its readers
  -- started after it, so a source started before it is never one of them or fed by one.
  me AS (
    SELECT coalesce(max(t.started_at), 'infinity'::timestamptz) AS started_at,
           coalesce(max(t.task_id), 0) AS task_id
      FROM tasks t
     WHERE t.job_id = p_job_id AND t.node_id = p_node_id AND t.task_type = 'REPLICA_COPY'
       AND t.object_id = p_object_id AND t.state = 'processing'),
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
          AND a.source_node_id <> p_node_id
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
          AND a.source_node_id <> p_node_id
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

-- The release window (ScheduleJob.DEFAULT_RELEASE_WINDOW, the master's --release-window): a
-- released object counts as waiting for its first follower replica until a pass finds one and
-- marks it here. A pass probes only the waiting releases (a handful), never the job's others.
ALTER TABLE copy_releases ADD COLUMN follower_held boolean NOT NULL DEFAULT false;
CREATE INDEX copy_releases_waiting_idx ON copy_releases (job_id) WHERE NOT follower_held;

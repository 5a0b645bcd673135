-- A copy that finished after its lease lapsed is still recorded, when nothing else took it since.
--
-- A node renews its leases with its heartbeats. When they arrive late (an overloaded node or master,
-- a partition from the masters longer than the lease), the lease rescuer puts the node's running
-- copies back to pending, and every one of them that then finished was discarded ("finished but
-- its lease was lost"): the bytes were on disk and verified, and the copy ran again from the first
-- byte. At 1,000 simulated nodes (bench/fleet.sh, session 16) that was 20,531 finished copies
-- against 36,202 recorded, and each redo costs the network the object again and Postgres another
-- claim, lookup and success.
--
-- A copy task belongs to one node: only that node ever claims it. So a success for a copy that is
-- pending again, with no lease on it (rescued, not yet claimed again), from its own node (the
-- success publishes the replica on the task's node), is the work the task asks for, and is
-- recorded as the task's success. A copy that was claimed again is held under that claim's lease
-- and goes by it, as before; a failed or canceled one stays so. Downloads, verifications and
-- materializations keep the strict rule: their lease is their only claim to the result.
/* [jooq ignore start] */
CREATE OR REPLACE FUNCTION mooncake_succeed(
    p_task_ids bigint[], p_owners text[], p_bytes bigint[], p_results text[],
    p_r_tasks bigint[], p_r_objects text[], p_r_nodes text[], p_r_sizes bigint[], p_r_digests text[],
    p_r_paths text[], p_r_offsets bigint[])
RETURNS TABLE (task_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH v AS (
    SELECT * FROM unnest(p_task_ids, p_owners, p_bytes, p_results) AS v (task_id, lease_owner, bytes_done, result)),
  r AS (
    SELECT * FROM unnest(p_r_tasks, p_r_objects, p_r_nodes, p_r_sizes, p_r_digests, p_r_paths, p_r_offsets)
           AS r (task_id, object_id, node_id, size_bytes, digest, file_path, file_offset)),
  done AS (
    UPDATE tasks t
       SET state = 'succeeded', bytes_done = v.bytes_done, result = v.result::jsonb, last_error = NULL,
           finished_at = now(), updated_at = now()
      FROM v
     WHERE t.task_id = v.task_id
       AND ((t.state = 'processing' AND t.lease_owner = v.lease_owner)
            OR (t.state = 'pending' AND t.lease_owner IS NULL AND t.task_type = 'REPLICA_COPY'
                AND EXISTS (SELECT 1 FROM r WHERE r.task_id = t.task_id AND r.node_id = t.node_id
                                              AND r.object_id = t.object_id)))
    RETURNING t.task_id),
  published AS (
    INSERT INTO object_replicas AS o (object_id, node_id, size_bytes, digest, file_path, file_offset)
    SELECT r.object_id, r.node_id, r.size_bytes, r.digest, r.file_path, r.file_offset
      FROM r
      JOIN done ON done.task_id = r.task_id
     ORDER BY r.object_id, r.node_id
    ON CONFLICT (object_id, node_id) DO UPDATE
       SET size_bytes = excluded.size_bytes, digest = excluded.digest, file_path = excluded.file_path,
           file_offset = excluded.file_offset, created_at = now()
    RETURNING 1)
  SELECT done.task_id FROM done;
END
$$;
/* [jooq ignore stop] */

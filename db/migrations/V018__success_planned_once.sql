-- A node's successes, planned once per server connection (issue 19).
--
-- The success statement (mark the node's finished tasks succeeded and publish their replicas, one
-- statement for a group commit of any size, V007 and session 10) was planned on every call: at
-- 100 simulated nodes through PgBouncer (bench/fleet.sh, pg_stat_statements) 16,569 plans for
-- 16,489 calls, 12 s of a 126 s job's Postgres CPU. Its arrays make every custom plan look cheaper
-- than the generic one, so Postgres never switches to the generic plan, and a transaction-mode
-- pooler spreads each node's statement over many server connections anyway. As a PL/pgSQL function
-- with a forced generic plan (as copy_sources, V015) its query is planned once per server
-- connection, until an invalidation. Every part of it is a primary-key probe per array element.
--
-- Arguments: the completions (task, lease owner, bytes done, result JSON) and the replicas to
-- publish (the task that publishes each, then the replica's columns), arrays of equal length each.
-- Answers the tasks recorded as succeeded: those still held under the given lease. A replica is
-- published only with its task's success, in the same statement.
/* [jooq ignore start] */
CREATE FUNCTION mooncake_succeed(
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
  done AS (
    UPDATE tasks t
       SET state = 'succeeded', bytes_done = v.bytes_done, result = v.result::jsonb, last_error = NULL,
           finished_at = now(), updated_at = now()
      FROM v
     WHERE t.task_id = v.task_id AND t.lease_owner = v.lease_owner AND t.state = 'processing'
    RETURNING t.task_id),
  published AS (
    INSERT INTO object_replicas AS o (object_id, node_id, size_bytes, digest, file_path, file_offset)
    SELECT r.object_id, r.node_id, r.size_bytes, r.digest, r.file_path, r.file_offset
      FROM unnest(p_r_tasks, p_r_objects, p_r_nodes, p_r_sizes, p_r_digests, p_r_paths, p_r_offsets)
           AS r (task_id, object_id, node_id, size_bytes, digest, file_path, file_offset)
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

-- bench/outgrown.sh: functions that fill a scratch database (plain or partitioned, the same rows in
-- both) with jobs as the scheduler and the nodes leave them. Rows are written in their final state
-- with triggers off (session_replication_role = replica), and the counters the triggers would have
-- kept (placement_bytes, task_counts) are written from the rows. A real table has also been updated
-- (claim, success) in place, so it holds more dead space than this one before any pruning.

CREATE FUNCTION outgrown_node(i int) RETURNS varchar LANGUAGE sql IMMUTABLE AS $$
  SELECT format('gpu-%s.rack-%s.cluster.local:7070', lpad(i::text, 4, '0'), i / 40)::varchar $$;

CREATE FUNCTION outgrown_object(p_job varchar, o int, k int) RETURNS varchar LANGUAGE sql IMMUTABLE AS $$
  SELECT format('hf/acme/%s/main/safetensors/model-%s-of-00004.safetensors#%s',
                p_job, lpad((o / greatest(k / 4, 1) + 1)::text, 5, '0'), lpad(o::text, 6, '0'))::varchar $$;

-- One job of p_nodes targets (the first is the seed) and p_k objects of 64 MiB in 4 files.
-- finished: every copy succeeded, finished p_age ago. running: the first quarter of the objects
-- copied everywhere, the rest released and pending (what followers claim next).
CREATE FUNCTION outgrown_fill_job(p_job varchar, p_nodes int, p_k int, p_finished boolean, p_age interval)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  obj constant bigint := 64 * 1024 * 1024;
  t0 timestamptz := now() - p_age - interval '2 hours';
  done_k int := CASE WHEN p_finished THEN p_k ELSE p_k / 4 END;
  partitioned boolean := to_regproc('outgrown_add_job') IS NOT NULL;
BEGIN
  IF partitioned THEN
    PERFORM outgrown_add_job(p_job);
  END IF;
  INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                    total_size_bytes, integrity, status, created_at, updated_at, finished_at)
  VALUES (p_job, md5(p_job) || md5(p_job), jsonb_build_object('model_id', 'acme/' || p_job, 'targets', p_nodes),
          'acme/' || p_job, 'main', 'safetensors', 'hf', outgrown_node(0), obj * p_k, 'object_digests',
          CASE WHEN p_finished THEN 'completed' ELSE 'replicating' END, t0, now() - p_age,
          CASE WHEN p_finished THEN now() - p_age END);
  INSERT INTO job_files (job_id, file_index, path, size_bytes, checksum, sha256, download_url, artifact_key,
                         chunk_size_bytes, chunk_count, object_prefix)
  SELECT p_job, f, format('model-%s-of-00004.safetensors', lpad((f + 1)::text, 5, '0')), obj * (p_k / 4),
         'sha256:' || md5(p_job || f) || md5(f || p_job), md5(p_job || f) || md5(f || p_job),
         format('https://huggingface.co/acme/%s/resolve/main/model-%s.safetensors', p_job, f),
         format('hf/acme/%s/main/safetensors/%s', p_job, f), obj, p_k / 4,
         format('hf/acme/%s/main/safetensors/model-%s-of-00004.safetensors', p_job, lpad((f + 1)::text, 5, '0'))
    FROM generate_series(0, 3) f;
  INSERT INTO job_objects (job_id, object_id, file_index, chunk_index, offset_bytes, length_bytes)
  SELECT p_job, outgrown_object(p_job, o, p_k), o / (p_k / 4), o % (p_k / 4), (o % (p_k / 4)) * obj, obj
    FROM generate_series(0, p_k - 1) o;
  INSERT INTO copy_releases (job_id, object_id, digest, released_at)
  SELECT p_job, outgrown_object(p_job, o, p_k), 'sha256:' || md5(p_job || o) || md5(o || p_job), t0
    FROM generate_series(0, p_k - 1) o;
  INSERT INTO placements (job_id, node_id, ordinal, is_seed, state, local_path, checksum_verified, updated_at)
  SELECT p_job, outgrown_node(i), i, i = 0, CASE WHEN p_finished THEN 'staged' ELSE 'acquiring' END,
         CASE WHEN p_finished THEN format('/data/models/hf/acme/%s/main/safetensors', p_job) END, p_finished, t0
    FROM generate_series(0, p_nodes - 1) i;

  -- Whole-model tasks: the seed's download; each follower's materialize once the job finished.
  INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, state, attempts, lease_owner, lease_expires_at,
                     started_at, bytes_total, bytes_done, result, created_at, updated_at, finished_at)
  SELECT p_job, outgrown_node(i), CASE WHEN i = 0 THEN 'MODEL_DOWNLOAD' ELSE 'MATERIALIZE' END, '',
         jsonb_build_object('model', jsonb_build_object('model_id', 'acme/' || p_job, 'revision', 'main',
                                                        'format', 'safetensors', 'provider', 'hf'),
                            'files', (SELECT jsonb_agg(jsonb_build_object('file_index', f, 'size_bytes', obj * (p_k / 4)))
                                        FROM generate_series(0, 3) f)),
         'succeeded', 1, outgrown_node(i) || '/inst-1', t0 + interval '1 hour', t0,
         CASE WHEN i = 0 THEN obj * p_k ELSE 0 END, CASE WHEN i = 0 THEN obj * p_k ELSE 0 END,
         '{"verified": true}'::jsonb, t0, t0 + interval '1 hour', t0 + interval '1 hour'
    FROM generate_series(0, p_nodes - 1) i
   WHERE i = 0 OR p_finished;

  -- Copies: one per (object, follower), inserted object by object as releases create them.
  INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, state, attempts, run_after, lease_owner,
                     lease_expires_at, started_at, bytes_total, bytes_done, source_node_id, created_at, updated_at,
                     finished_at)
  SELECT p_job, outgrown_node(f), 'REPLICA_COPY', outgrown_object(p_job, o, p_k), NULL,
         CASE WHEN o < done_k THEN 'succeeded' ELSE 'pending' END,
         CASE WHEN o < done_k THEN 1 ELSE 0 END,
         CASE WHEN o < done_k THEN t0 ELSE now() - interval '1 minute' END,
         CASE WHEN o < done_k THEN outgrown_node(f) || '/inst-1' END,
         CASE WHEN o < done_k THEN t0 + interval '90 seconds' END,
         CASE WHEN o < done_k THEN t0 + interval '30 seconds' END,
         obj, CASE WHEN o < done_k THEN obj ELSE 0 END,
         CASE WHEN o < done_k THEN outgrown_node((f + o) % p_nodes) END,
         t0, t0 + interval '60 seconds', CASE WHEN o < done_k THEN t0 + interval '60 seconds' END
    FROM generate_series(0, p_k - 1) o, generate_series(1, p_nodes - 1) f
   ORDER BY o, f;

  -- One copy in 500 failed once before it succeeded (a retry attempt row).
  -- (The partitioned task_attempts carries the job id too.)
  EXECUTE format(
    'INSERT INTO task_attempts (%s task_id, attempt, node_id, lease_owner, started_at, finished_at, outcome, error)
     SELECT %s t.task_id, 1, t.node_id, t.lease_owner, t.started_at, t.started_at + interval ''5 seconds'', ''retry'',
            ''peer closed the connection''
       FROM tasks t
      WHERE t.job_id = $1 AND t.task_type = ''REPLICA_COPY'' AND t.state = ''succeeded'' AND t.task_id %% 500 = 0',
    CASE WHEN partitioned THEN 'job_id,' ELSE '' END, CASE WHEN partitioned THEN 't.job_id,' ELSE '' END)
  USING p_job;
  UPDATE tasks t SET attempts = 2
   WHERE t.job_id = p_job AND t.task_type = 'REPLICA_COPY' AND t.state = 'succeeded' AND t.task_id % 500 = 0;

  -- Replicas: the seed holds every object, a follower the objects it copied.
  INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset, created_at)
  SELECT outgrown_object(p_job, o, p_k), outgrown_node(i), obj, 'sha256:' || md5(p_job || o) || md5(o || p_job),
         format('/data/models/hf/acme/%s/main/safetensors/model-%s-of-00004.safetensors', p_job,
                lpad((o / (p_k / 4) + 1)::text, 5, '0')),
         (o % (p_k / 4)) * obj, t0
    FROM generate_series(0, p_k - 1) o, generate_series(0, p_nodes - 1) i
   WHERE i = 0 OR o < done_k;

  INSERT INTO placement_bytes (job_id, node_id, staged_bytes)
  SELECT t.job_id, t.node_id, sum(CASE WHEN t.state = 'succeeded' THEN t.bytes_total ELSE t.bytes_done END)
    FROM tasks t
   WHERE t.job_id = p_job AND t.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
   GROUP BY t.job_id, t.node_id;
  INSERT INTO task_counts (job_id, node_id, task_type, state, tasks)
  SELECT t.job_id, t.node_id, t.task_type, t.state, count(*)
    FROM tasks t
   WHERE t.job_id = p_job
   GROUP BY t.job_id, t.node_id, t.task_type, t.state;
END $$;

-- Between two hot-path runs: the running job's copies that the last run claimed go back to pending
-- (triggers off) and the replicas its successes published are deleted, so every run starts from
-- the same work. Run rows are those claimed within the last hour (the fill's are two hours old).
CREATE FUNCTION outgrown_reset_running() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  PERFORM set_config('session_replication_role', 'replica', true);
  UPDATE tasks
     SET state = 'pending', attempts = 0, lease_owner = NULL, lease_expires_at = NULL, started_at = NULL,
         bytes_done = 0, source_node_id = NULL, result = NULL, finished_at = NULL, updated_at = created_at,
         run_after = now() - interval '1 minute'
   WHERE job_id = 'job-running' AND task_type = 'REPLICA_COPY' AND started_at > now() - interval '1 hour';
  GET DIAGNOSTICS n = ROW_COUNT;
  DELETE FROM object_replicas WHERE created_at > now() - interval '1 hour';
  DELETE FROM task_count_deltas WHERE job_id = 'job-running';
  RETURN n;
END $$;

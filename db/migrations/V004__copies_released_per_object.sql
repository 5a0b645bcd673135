-- Copies created when their object is released, without payloads, through the cheapest write
-- path a task row has. The issue's figure (1,000,000 copy tasks of one job claimable within 10 s of
-- its creation) could not be met while every copy row carried a JSON payload, was inserted blocked
-- (run_after = 9999-01-01) and then rewritten by a release UPDATE. Now:
--   * a copy row is inserted only once the seed has published its object (for the current
--     download attempt; with seed reuse every listed replica at once), so it is claimable from
--     the start and never rewritten to be released; copy_releases remembers which objects have
--     been released and with which digest, one row per (job, object), not per copy;
--   * a copy row has no payload (NULL): the claim builds it from job_objects, job_files, jobs and
--     copy_releases, four primary-key probes per claimed copy;
--   * the indexes and triggers an insert maintains are the ones a claim needs (see below).
-- docs/ARCHITECTURE.md "Queue at scale" has the measurements behind each choice.

-- One row per object of a job whose copies exist: the digest the seed published for it when it
-- was released. Written by the statement that creates the object's copies, in the same
-- transaction; its primary key is what makes that creation happen once per object.
CREATE TABLE copy_releases (
    job_id       varchar(128)  NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    object_id    varchar(1024) NOT NULL,
    digest       varchar(160)  NOT NULL,                  -- the seed's 'sha256:<hex>' at release
    released_at  timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, object_id)
);

-- Copies carry no payload; every other task type still does.
ALTER TABLE tasks ALTER COLUMN payload DROP NOT NULL;

-- V001's unique (job_id, node_id, task_type, object_id) cost as much as the heap itself for a
-- million copies (a ~100-byte key per row). Copies are unique by construction: they are inserted
-- only by the statement that inserts their object's copy_releases row, whose primary key lets that
-- happen once. The other task types keep the constraint (a partial unique index, below), and
-- lookups by job use an index on job_id alone: a job's rows share one key, so B-tree
-- deduplication keeps it small and cheap to extend (a million-row release took about 2 s less
-- than with (job_id, node_id, task_id); (job_id, node_id) saved nothing). Per-node work of a job
-- (a failed follower's pending copies) goes through the claim index (node_id, ...) instead.
ALTER TABLE tasks DROP CONSTRAINT tasks_one_per_object;
CREATE INDEX tasks_job_idx ON tasks (job_id);

/* [jooq ignore start] */
-- Enqueueing stays idempotent for whole-model tasks (INSERT ... ON CONFLICT DO NOTHING, even when
-- two masters enqueue at once).
CREATE UNIQUE INDEX tasks_one_per_object ON tasks (job_id, node_id, task_type, object_id)
    WHERE task_type <> 'REPLICA_COPY';

-- The foreign key from tasks to jobs checked every inserted row with its own query (about 3 s of
-- a million-row insert here). Task rows are inserted only by the scheduler while it holds the job's
-- row FOR UPDATE, so the job exists and cannot go away meanwhile; jobs are never deleted by the
-- application. Should one be deleted by hand, its tasks go with it, as the cascade did.
ALTER TABLE tasks DROP CONSTRAINT tasks_job_id_fkey;

CREATE FUNCTION mooncake_delete_tasks_of_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM tasks t USING (SELECT DISTINCT job_id FROM old_rows) o WHERE t.job_id = o.job_id;
    RETURN NULL;
END $$;

CREATE TRIGGER jobs_delete_tasks AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_delete_tasks_of_jobs();

-- V001's and V002's insert triggers were statement-level with a transition table: Postgres then
-- keeps a copy of every inserted row (spilled to disk past work_mem) for the trigger to scan, which
-- took longer than the insert itself for a million rows. Row-level triggers with a WHEN clause cost
-- a million-row insert one expression per row and nothing else:
--   * wake-ups: a node gets a notification for each new whole-model task; copies are created by
--     the release statement, which notifies their nodes itself (once per node per statement);
--   * placement_bytes: only a row inserted with bytes to count changes a counter (the scheduler
--     never inserts one; tests and tools may).
DROP TRIGGER tasks_notify_insert ON tasks;
DROP FUNCTION mooncake_notify_tasks_inserted();
DROP TRIGGER tasks_count_bytes_insert ON tasks;
DROP FUNCTION mooncake_count_bytes_inserted();

CREATE FUNCTION mooncake_notify_task_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('mooncake_node', NEW.node_id);
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_notify_insert AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.task_type <> 'REPLICA_COPY')
    EXECUTE FUNCTION mooncake_notify_task_inserted();

CREATE FUNCTION mooncake_count_bytes_row_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO placement_bytes AS p (job_id, node_id, staged_bytes)
    VALUES (NEW.job_id, NEW.node_id, CASE WHEN NEW.state = 'succeeded' THEN NEW.bytes_total ELSE NEW.bytes_done END)
    ON CONFLICT (job_id, node_id) DO UPDATE SET staged_bytes = p.staged_bytes + excluded.staged_bytes;
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_count_bytes_insert AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
                       AND CASE WHEN NEW.state = 'succeeded' THEN NEW.bytes_total ELSE NEW.bytes_done END <> 0)
    EXECUTE FUNCTION mooncake_count_bytes_row_inserted();

-- Jobs in flight when this migration runs: copies still blocked (run_after = 9999-01-01, never
-- claimed) are deleted, and the release statement creates them again, payload-less, once their
-- object is published. Copies already released keep their payload, which the claim uses as
-- before; their objects are recorded as released so they are not created a second time.
DELETE FROM tasks
 WHERE task_type = 'REPLICA_COPY' AND state = 'pending' AND run_after = '9999-01-01 00:00:00+00'::timestamptz;
INSERT INTO copy_releases (job_id, object_id, digest)
SELECT DISTINCT ON (t.job_id, t.object_id) t.job_id, t.object_id, t.payload #>> '{files,0,objects,0,digest}'
  FROM tasks t
 WHERE t.task_type = 'REPLICA_COPY' AND t.payload #>> '{files,0,objects,0,digest}' IS NOT NULL
 ORDER BY t.job_id, t.object_id;
/* [jooq ignore stop] */

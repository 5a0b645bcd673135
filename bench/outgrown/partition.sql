-- bench/outgrown.sh: the operator's option measured against main's schema, never a migration.
-- Run on a scratch database migrated with db/migrations (V001..V024) while `tasks` is still empty:
-- replaces `tasks` and `task_attempts` with the same tables LIST-partitioned by job_id, one
-- partition per job, so that a finished job's rows go with a DROP TABLE instead of DELETEs.
--
-- What differs from main's tables, and why (Postgres 15's rules for partitioned tables):
--   * tasks' primary key is (task_id, job_id): a unique constraint must contain the partition key.
--     task_id stays an identity column, unique by construction;
--   * task_attempts gets a job_id column and is partitioned the same way; its foreign key to
--     tasks (V001, ON DELETE CASCADE) is gone: a cascade from a partition that is dropped deletes
--     nothing row by row anyway, and tasks has no foreign key to jobs since V004 for the same
--     reason (the writer holds the row it belongs to);
--   * storage parameters (fillfactor, autovacuum) cannot be set on a partitioned table: each
--     partition gets V001/V002's values when outgrown_add_job creates it;
--   * everything else is main's: columns, defaults, checks, every index (created on the parent,
--     so each partition gets its own), every trigger and the task_attempt_log view.
-- The script checks afterwards that the index and trigger names equal the plain database's.

DROP VIEW task_attempt_log;
DROP TABLE task_attempts;
DROP TABLE tasks;

CREATE TABLE tasks (
    task_id          bigint GENERATED ALWAYS AS IDENTITY,
    job_id           varchar(128)  NOT NULL,
    node_id          varchar(300)  NOT NULL,
    task_type        varchar(32)   NOT NULL
                     CHECK (task_type IN ('MODEL_DOWNLOAD', 'MODEL_VERIFY', 'REPLICA_COPY', 'MATERIALIZE')),
    object_id        varchar(1024) NOT NULL DEFAULT '',
    payload          jsonb,
    state            varchar(16)   NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'processing', 'succeeded', 'failed', 'canceled')),
    attempts         integer       NOT NULL DEFAULT 0,
    max_attempts     integer       NOT NULL DEFAULT 5 CHECK (max_attempts > 0),
    run_after        timestamptz   NOT NULL DEFAULT now(),
    lease_owner      varchar(128),
    lease_expires_at timestamptz,
    started_at       timestamptz,
    bytes_total      bigint        NOT NULL DEFAULT 0,
    bytes_done       bigint        NOT NULL DEFAULT 0,
    source_node_id   varchar(300),
    result           jsonb,
    last_error       text,
    created_at       timestamptz   NOT NULL DEFAULT now(),
    updated_at       timestamptz   NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    CONSTRAINT tasks_pkey PRIMARY KEY (task_id, job_id)
) PARTITION BY LIST (job_id);

CREATE INDEX tasks_claim_idx ON tasks (node_id, run_after, task_id) WHERE state = 'pending';
CREATE INDEX tasks_failed_idx ON tasks (job_id, node_id, task_type) WHERE state = 'failed';
CREATE INDEX tasks_job_idx ON tasks (job_id);
CREATE UNIQUE INDEX tasks_one_per_object ON tasks (job_id, node_id, task_type, object_id)
    WHERE task_type <> 'REPLICA_COPY';
CREATE INDEX tasks_reading_from_idx ON tasks (source_node_id)
    WHERE state = 'processing' AND source_node_id IS NOT NULL;
CREATE INDEX tasks_running_object_idx ON tasks (object_id, job_id, node_id)
    WHERE state = 'processing' AND task_type = 'REPLICA_COPY';
CREATE INDEX tasks_leased_idx ON tasks (task_id) WHERE state = 'processing' AND lease_owner IS NOT NULL;

-- The triggers as V004, V016 and V017 left them (the functions are unchanged, they name `tasks`).
CREATE TRIGGER tasks_count_bytes_insert AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
                       AND CASE WHEN NEW.state = 'succeeded' THEN NEW.bytes_total ELSE NEW.bytes_done END <> 0)
    EXECUTE FUNCTION mooncake_count_bytes_row_inserted();
CREATE TRIGGER tasks_count_bytes_update AFTER UPDATE ON tasks
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_count_bytes_updated();
CREATE TRIGGER tasks_count_state_insert AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.payload IS NOT NULL)
    EXECUTE FUNCTION mooncake_count_state_inserted();
CREATE TRIGGER tasks_count_states_delete AFTER DELETE ON tasks
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_count_states_deleted();
CREATE TRIGGER tasks_count_states_update AFTER UPDATE ON tasks
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_count_states_updated();
CREATE TRIGGER tasks_notify_insert AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.task_type <> 'REPLICA_COPY')
    EXECUTE FUNCTION mooncake_notify_task_inserted();
CREATE TRIGGER tasks_notify_update AFTER UPDATE ON tasks
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_notify_tasks_updated();

CREATE TABLE task_attempts (
    job_id      varchar(128)  NOT NULL,
    task_id     bigint        NOT NULL,
    attempt     integer       NOT NULL,
    node_id     varchar(300)  NOT NULL,
    lease_owner varchar(128)  NOT NULL,
    started_at  timestamptz   NOT NULL,
    finished_at timestamptz   NOT NULL DEFAULT now(),
    outcome     varchar(16)   NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'retry', 'lease_expired')),
    error       text,
    CONSTRAINT task_attempts_pkey PRIMARY KEY (task_id, attempt, job_id)
) PARTITION BY LIST (job_id);

CREATE VIEW task_attempt_log AS
SELECT a.task_id, a.attempt, a.node_id, a.lease_owner, a.started_at, a.finished_at, a.outcome, a.error
  FROM task_attempts a
UNION ALL
SELECT t.task_id, t.attempts, t.node_id, coalesce(t.lease_owner, t.node_id), coalesce(t.started_at, t.created_at),
       coalesce(t.finished_at, t.updated_at), 'succeeded', NULL
  FROM tasks t
 WHERE t.state = 'succeeded';

-- What the scheduler would do when it creates a job: the job's partitions, with V001/V002's
-- storage parameters. Names from the job id's digest (job ids are arbitrary strings).
CREATE FUNCTION outgrown_partition_name(p_job_id varchar, p_table text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT p_table || '_j_' || left(md5(p_job_id), 16) $$;

CREATE FUNCTION outgrown_add_job(p_job_id varchar) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I PARTITION OF tasks FOR VALUES IN (%L)
                    WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02,
                          autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02,
                          autovacuum_vacuum_cost_delay = 0)',
                 outgrown_partition_name(p_job_id, 'tasks'), p_job_id);
  EXECUTE format('CREATE TABLE %I PARTITION OF task_attempts FOR VALUES IN (%L)
                    WITH (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_insert_scale_factor = 0.05,
                          autovacuum_vacuum_cost_delay = 0)',
                 outgrown_partition_name(p_job_id, 'task_attempts'), p_job_id);
END $$;

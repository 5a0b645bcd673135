-- The whole distribution schema: jobs, their files and objects, per-node placements, the task
-- queue, the object replica catalogue and the node registry. Postgres is the source of truth;
-- masters and node workers are stateless around it.
-- Keys are varchar(n), not text: jOOQ's DDLDatabase (code generation without a live database)
-- cannot index CLOB columns.

CREATE TABLE nodes (
    node_id        varchar(300)  NOT NULL PRIMARY KEY,   -- host:port of the node's chunk server
    host           varchar(255)  NOT NULL,
    port           integer       NOT NULL CHECK (port BETWEEN 1 AND 65535),
    data_dir       varchar(4096) NOT NULL,
    instance_id    varchar(64)   NOT NULL,               -- changes on every client restart
    started_at     timestamptz   NOT NULL DEFAULT now(),
    heartbeat_at   timestamptz   NOT NULL DEFAULT now()
);

CREATE TABLE jobs (
    job_id           varchar(128)  NOT NULL PRIMARY KEY,  -- the caller's identifier
    request_sha256   varchar(64)   NOT NULL,              -- canonical request digest, for idempotent re-POST
    request          jsonb         NOT NULL,
    model_id         varchar(512)  NOT NULL,
    revision         varchar(256)  NOT NULL,
    format           varchar(128)  NOT NULL,
    provider         varchar(128)  NOT NULL,
    seed_node_id     varchar(300)  NOT NULL,
    total_size_bytes bigint        NOT NULL CHECK (total_size_bytes >= 0),
    integrity        varchar(32)   NOT NULL CHECK (integrity IN ('manifest_sha256', 'object_digests')),
    status           varchar(16)   NOT NULL DEFAULT 'planned'
                     CHECK (status IN ('planned', 'seeding', 'replicating', 'completed', 'failed', 'canceled')),
    last_error       text,
    created_at       timestamptz   NOT NULL DEFAULT now(),
    updated_at       timestamptz   NOT NULL DEFAULT now(),
    finished_at      timestamptz
);

-- The scheduler scans only active jobs.
CREATE INDEX jobs_active_idx ON jobs (created_at) WHERE status IN ('planned', 'seeding', 'replicating');

CREATE TABLE job_files (
    job_id           varchar(128)  NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    file_index       integer       NOT NULL,
    path             varchar(4096) NOT NULL,
    size_bytes       bigint        NOT NULL CHECK (size_bytes >= 0),
    checksum         varchar(256)  NOT NULL,
    sha256           varchar(64),                         -- enforceable digest parsed from checksum, else NULL
    download_url     varchar(8192) NOT NULL,
    artifact_key     varchar(1024) NOT NULL,
    chunk_size_bytes bigint        NOT NULL CHECK (chunk_size_bytes > 0),
    chunk_count      integer       NOT NULL CHECK (chunk_count >= 0),
    object_prefix    varchar(1024) NOT NULL,
    PRIMARY KEY (job_id, file_index)
);

CREATE TABLE job_objects (
    job_id        varchar(128)  NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    object_id     varchar(1024) NOT NULL,
    file_index    integer       NOT NULL,
    chunk_index   integer       NOT NULL,
    offset_bytes  bigint        NOT NULL CHECK (offset_bytes >= 0),
    length_bytes  bigint        NOT NULL CHECK (length_bytes >= 0),
    PRIMARY KEY (job_id, object_id)
);

CREATE TABLE placements (
    job_id            varchar(128)  NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    node_id           varchar(300)  NOT NULL,
    ordinal           integer       NOT NULL,             -- position in the request's target_nodes
    is_seed           boolean       NOT NULL,
    state             varchar(16)   NOT NULL DEFAULT 'planned'
                      CHECK (state IN ('planned', 'acquiring', 'staged', 'failed')),
    local_path        varchar(4096),
    checksum_verified boolean       NOT NULL DEFAULT false,
    last_error        text,
    updated_at        timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, node_id)
);

-- The task queue. One row per (job, node, type, object): a retry re-uses its row, so enqueueing
-- is idempotent (INSERT ... ON CONFLICT DO NOTHING) even when two masters enqueue at once.
CREATE TABLE tasks (
    task_id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id           varchar(128)  NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    node_id          varchar(300)  NOT NULL,
    task_type        varchar(32)   NOT NULL
                     CHECK (task_type IN ('MODEL_DOWNLOAD', 'MODEL_VERIFY', 'REPLICA_COPY', 'MATERIALIZE')),
    object_id        varchar(1024) NOT NULL DEFAULT '',   -- '' for whole-model tasks
    payload          jsonb         NOT NULL,
    state            varchar(16)   NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'processing', 'succeeded', 'failed', 'canceled')),
    attempts         integer       NOT NULL DEFAULT 0,
    max_attempts     integer       NOT NULL DEFAULT 5 CHECK (max_attempts > 0),
    run_after        timestamptz   NOT NULL DEFAULT now(),
    lease_owner      varchar(128),                        -- <node_id>/<client instance>, set by the claim
    lease_expires_at timestamptz,                         -- renewed by the owner's heartbeat
    started_at       timestamptz,                         -- when the current attempt was claimed
    bytes_total      bigint        NOT NULL DEFAULT 0,
    bytes_done       bigint        NOT NULL DEFAULT 0,
    source_node_id   varchar(300),
    result           jsonb,
    last_error       text,
    created_at       timestamptz   NOT NULL DEFAULT now(),
    updated_at       timestamptz   NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    CONSTRAINT tasks_one_per_object UNIQUE (job_id, node_id, task_type, object_id)
);

-- The claim: a node's ready rows in id order. Partial, so finished rows never slow a claim.
CREATE INDEX tasks_claim_idx ON tasks (node_id, task_id) WHERE state = 'pending';
-- Lease rescue scans only rows in flight.
CREATE INDEX tasks_processing_idx ON tasks (lease_expires_at) WHERE state = 'processing';

-- Every attempt of every task, with its outcome: the history operators read.
CREATE TABLE task_attempts (
    task_id     bigint        NOT NULL REFERENCES tasks (task_id) ON DELETE CASCADE,
    attempt     integer       NOT NULL,
    node_id     varchar(300)  NOT NULL,
    lease_owner varchar(128)  NOT NULL,
    started_at  timestamptz   NOT NULL,
    finished_at timestamptz   NOT NULL DEFAULT now(),
    outcome     varchar(16)   NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'retry', 'lease_expired')),
    error       text,
    PRIMARY KEY (task_id, attempt)
);

-- Which node holds which object, where in which file, with the digest computed when the bytes
-- were written. Only complete (fully written, fsynced, digest-checked) replicas are listed.
CREATE TABLE object_replicas (
    object_id    varchar(1024) NOT NULL,
    node_id      varchar(300)  NOT NULL,
    size_bytes   bigint        NOT NULL CHECK (size_bytes >= 0),
    digest       varchar(160)  NOT NULL,                  -- 'sha256:<hex>'
    file_path    varchar(4096) NOT NULL,                  -- the materialized model file holding it
    file_offset  bigint        NOT NULL CHECK (file_offset >= 0),
    created_at   timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (object_id, node_id)
);

CREATE INDEX object_replicas_node_idx ON object_replicas (node_id);

/* [jooq ignore start] */
-- Hot, update-heavy tables: leave room for HOT updates and vacuum them early, so dead tuples
-- from lease renewals and state changes do not pile up between autovacuum runs.
ALTER TABLE tasks SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE nodes SET (fillfactor = 50);
ALTER TABLE placements SET (fillfactor = 80);

-- Wake-ups: one notification per node per statement that creates, re-queues or releases its work
-- (a blocked copy's run_after moving from 9999-01-01 to the past),
-- and one per job whose tasks finished, so the scheduler re-evaluates without waiting for a tick.
CREATE FUNCTION mooncake_notify_tasks_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('mooncake_node', n.node_id) FROM (SELECT DISTINCT node_id FROM new_rows) n;
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_notify_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_notify_tasks_inserted();

CREATE FUNCTION mooncake_notify_tasks_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('mooncake_node', n.node_id)
       FROM (SELECT DISTINCT nr.node_id FROM new_rows nr JOIN old_rows o ON o.task_id = nr.task_id
              WHERE nr.state = 'pending' AND (o.state <> 'pending' OR nr.run_after < o.run_after)) n;
    PERFORM pg_notify('mooncake_job', j.job_id)
       FROM (SELECT DISTINCT nr.job_id FROM new_rows nr JOIN old_rows o ON o.task_id = nr.task_id
              WHERE nr.state IN ('succeeded', 'failed') AND o.state <> nr.state) j;
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_notify_update AFTER UPDATE ON tasks
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_notify_tasks_updated();

-- A newly published object may unblock copies (pipelining): wake the schedulers.
CREATE FUNCTION mooncake_notify_replicas() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('mooncake_job', '');
    RETURN NULL;
END $$;

CREATE TRIGGER object_replicas_notify AFTER INSERT OR UPDATE ON object_replicas
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_notify_replicas();
/* [jooq ignore stop] */

-- The task queue at scale: a claim index the planner cannot route around, per-placement byte
-- totals kept by triggers (the snapshot reads them instead of the task rows, and they outlive
-- pruning), the summary that pruned tasks leave behind, and vacuum settings for the hot tables.

-- The claim orders by (run_after, task_id): only this index yields that order, so no statistics
-- (stale ones after thousands of rows finished, or none with autovacuum off) can make the planner
-- walk the primary key instead and filter finished rows, which it did with the old
-- (node_id, task_id) index and random_page_cost = 4. run_after in the key also turns "not before
-- its retry backoff" into an index bound instead of a filter. QueuePlanTest checks the plan.
DROP INDEX tasks_claim_idx;
CREATE INDEX tasks_claim_idx ON tasks (node_id, run_after, task_id) WHERE state = 'pending';

-- The pruner looks for finished jobs older than the retention.
CREATE INDEX jobs_finished_idx ON jobs (finished_at) WHERE status IN ('completed', 'failed', 'canceled');

-- Bytes staged per (job, node) by the snapshot's rule: MODEL_DOWNLOAD and REPLICA_COPY tasks,
-- succeeded ones at bytes_total, the others at bytes_done. Kept by statement-level triggers from
-- every insert and update of tasks, so it always equals that sum over the live rows; deleting
-- task rows (pruning) does not subtract, so it keeps the figure of a pruned job. The snapshot of
-- a job with a million tasks reads a hundred rows here instead of aggregating a million.
CREATE TABLE placement_bytes (
    job_id        varchar(128)  NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    node_id       varchar(300)  NOT NULL,
    staged_bytes  bigint        NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, node_id)
);

-- What pruned tasks leave behind: one row per (job, node, task type, final state) with what the
-- operator reports read from task rows (counts, attempts, bytes, transfer time, the last error).
-- Rows accumulate when a job's tasks are pruned over several batches.
CREATE TABLE task_history (
    job_id           varchar(128)  NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    node_id          varchar(300)  NOT NULL,
    task_type        varchar(32)   NOT NULL,
    state            varchar(16)   NOT NULL,
    tasks            integer       NOT NULL,
    attempts         integer       NOT NULL,              -- sum of the tasks' attempts
    failed_attempts  integer       NOT NULL,              -- task_attempts rows: failed, retry, lease_expired
    bytes_total      bigint        NOT NULL,
    bytes_done       bigint        NOT NULL,
    timed_bytes      bigint        NOT NULL,              -- bytes_total of tasks with finished_at > started_at
    timed_seconds    double precision NOT NULL,           -- their finished_at - started_at, summed
    first_created_at timestamptz,
    last_finished_at timestamptz,
    last_error       text,
    pruned_at        timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, node_id, task_type, state)
);

/* [jooq ignore start] */
-- Vacuum settings for the hot tables (V001 set tasks' fillfactor and scale factors). Autovacuum's
-- defaults (20 % dead rows, 20 % inserted rows, cost-throttled) suit cold tables: a queue table
-- whose rows are updated three times in their short life and then pruned needs vacuum early and
-- unthrottled, or dead tuples pile up under the claim index and every claim reads them.
--   tasks: a big enqueue (a million copy tasks) is insert-only until claimed; vacuum it after 2 %
--     new rows as well, so the visibility map and freezing keep up; no cost delay.
--   task_attempts: insert-only, then deleted by the pruner with its task.
--   nodes: one heartbeat UPDATE per node every 2 s; small table, so an absolute threshold.
--   placement_bytes: a counter row per (job, node) updated by every completion and progress
--     report of that node: room for HOT updates, and an absolute threshold.
ALTER TABLE tasks SET (autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE task_attempts SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_insert_scale_factor = 0.05,
                               autovacuum_vacuum_cost_delay = 0);
ALTER TABLE nodes SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
ALTER TABLE placement_bytes SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
                                 autovacuum_vacuum_cost_delay = 0);

-- placement_bytes upkeep, one statement at a time. Rows are upserted in key order so two
-- statements touching the same counters lock them in the same order (no deadlock). Rows that
-- count zero bytes are filtered before grouping, so a statement that changes no byte figure
-- (claims, an enqueue of ten thousand new copies) aggregates nothing and writes nothing.
CREATE FUNCTION mooncake_count_bytes_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO placement_bytes AS p (job_id, node_id, staged_bytes)
    SELECT n.job_id, n.node_id, sum(CASE WHEN n.state = 'succeeded' THEN n.bytes_total ELSE n.bytes_done END)
      FROM new_rows n
     WHERE n.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
       AND CASE WHEN n.state = 'succeeded' THEN n.bytes_total ELSE n.bytes_done END <> 0
     GROUP BY n.job_id, n.node_id
    HAVING sum(CASE WHEN n.state = 'succeeded' THEN n.bytes_total ELSE n.bytes_done END) <> 0
     ORDER BY n.job_id, n.node_id
    ON CONFLICT (job_id, node_id) DO UPDATE SET staged_bytes = p.staged_bytes + excluded.staged_bytes;
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_count_bytes_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_count_bytes_inserted();

CREATE FUNCTION mooncake_count_bytes_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO placement_bytes AS p (job_id, node_id, staged_bytes)
    SELECT d.job_id, d.node_id, sum(d.bytes)
      FROM (SELECT n.job_id, n.node_id, CASE WHEN n.state = 'succeeded' THEN n.bytes_total ELSE n.bytes_done END AS bytes
              FROM new_rows n
             WHERE n.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
               AND CASE WHEN n.state = 'succeeded' THEN n.bytes_total ELSE n.bytes_done END <> 0
            UNION ALL
            SELECT o.job_id, o.node_id, -(CASE WHEN o.state = 'succeeded' THEN o.bytes_total ELSE o.bytes_done END)
              FROM old_rows o
             WHERE o.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
               AND CASE WHEN o.state = 'succeeded' THEN o.bytes_total ELSE o.bytes_done END <> 0) d
     GROUP BY d.job_id, d.node_id
    HAVING sum(d.bytes) <> 0
     ORDER BY d.job_id, d.node_id
    ON CONFLICT (job_id, node_id) DO UPDATE SET staged_bytes = p.staged_bytes + excluded.staged_bytes;
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_count_bytes_update AFTER UPDATE ON tasks
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_count_bytes_updated();

-- The wake-up trigger of V001, without its join, and waking nodes for unblocked work too. It joined new_rows to old_rows on task_id, and
-- PL/pgSQL caches that plan per session: chosen for the few rows of a claim (a nested loop), it
-- was reused for an UPDATE of forty thousand rows (copies released when the seed publishes) and
-- rescanned the spilled transition table once per row, for minutes. Set operations on the
-- filtered rows find the same nodes and jobs in one pass, whatever plan is cached.
CREATE OR REPLACE FUNCTION mooncake_notify_tasks_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Nodes with work that just became claimable: back to pending (a rescued lease, a restarted
    -- client's tasks) or unblocked (run_after moved from the future to now). A retry waiting out
    -- its backoff is not claimable yet; the worker's poll finds it when it is.
    PERFORM pg_notify('mooncake_node', n.node_id)
       FROM (SELECT DISTINCT c.node_id
               FROM (SELECT nr.task_id, nr.node_id FROM new_rows nr WHERE nr.state = 'pending' AND nr.run_after <= now()
                     EXCEPT
                     SELECT o.task_id, o.node_id FROM old_rows o WHERE o.state = 'pending' AND o.run_after <= now()) c) n;
    -- Jobs with a task that just finished.
    PERFORM pg_notify('mooncake_job', j.job_id)
       FROM (SELECT DISTINCT c.job_id
               FROM (SELECT nr.task_id, nr.job_id, nr.state FROM new_rows nr WHERE nr.state IN ('succeeded', 'failed')
                     EXCEPT
                     SELECT o.task_id, o.job_id, o.state FROM old_rows o WHERE o.state IN ('succeeded', 'failed')) c) j;
    RETURN NULL;
END $$;

-- Existing task rows, so the counters start equal to the sum they stand for.
INSERT INTO placement_bytes (job_id, node_id, staged_bytes)
SELECT t.job_id, t.node_id, sum(CASE WHEN t.state = 'succeeded' THEN t.bytes_total ELSE t.bytes_done END)
  FROM tasks t
 WHERE t.task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY')
 GROUP BY t.job_id, t.node_id
HAVING sum(CASE WHEN t.state = 'succeeded' THEN t.bytes_total ELSE t.bytes_done END) <> 0;
/* [jooq ignore stop] */

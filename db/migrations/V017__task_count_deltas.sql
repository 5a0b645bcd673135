-- Task counts without a row lock shared between nodes (issue 19).
--
-- V016 kept task_counts by upserting its rows from every statement that changes tasks. The rows
-- are per (job, node, type, state), so two nodes never touched the same one, but the scheduler's
-- release statement did: it adds the new copies to every follower's "pending" row, in the pass's
-- transaction, which holds them until the pass commits. A release waited for any node's claim or
-- success that held its row, and every other node's claim, success and deferral then waited for
-- the release: at 100 simulated nodes (bench/fleet.sh, pg_stat_statements.track = all) the
-- counters' upsert inside the triggers took 19 ms a call on average (762 s of 40,279 calls), where
-- the placement_bytes upsert beside it in the same statements took 0.5 ms, and the claim 31 ms.
--
-- Now every change appends its delta to task_count_deltas (an insert takes no lock another insert
-- waits for) and the scheduler pass, which holds the job's row, folds the job's deltas into
-- task_counts and reads the sum in one statement (ScheduleJob.taskCounts). task_counts is written
-- by that fold alone; the count of (job, node, type, state) is its task_counts row plus its deltas.
CREATE TABLE task_count_deltas (
    job_id     varchar(128) NOT NULL,   -- no foreign key, as tasks have none since V004
    node_id    varchar(300) NOT NULL,
    task_type  varchar(32)  NOT NULL,
    state      varchar(16)  NOT NULL,
    tasks      bigint       NOT NULL
);

CREATE INDEX task_count_deltas_job_idx ON task_count_deltas (job_id);

/* [jooq ignore start] */
-- Appended to and emptied many times a second while a job runs: vacuumed often.
ALTER TABLE task_count_deltas SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
                                   autovacuum_vacuum_insert_scale_factor = 0,
                                   autovacuum_vacuum_insert_threshold = 5000, autovacuum_vacuum_cost_delay = 0);

CREATE OR REPLACE FUNCTION mooncake_count_states_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_count_deltas (job_id, node_id, task_type, state, tasks)
    SELECT d.job_id, d.node_id, d.task_type, d.state, sum(d.n)
      FROM (SELECT n.job_id, n.node_id, n.task_type, n.state, 1 AS n FROM new_rows n
            UNION ALL
            SELECT o.job_id, o.node_id, o.task_type, o.state, -1 FROM old_rows o) d
     GROUP BY d.job_id, d.node_id, d.task_type, d.state
    HAVING sum(d.n) <> 0;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION mooncake_count_states_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_count_deltas (job_id, node_id, task_type, state, tasks)
    SELECT o.job_id, o.node_id, o.task_type, o.state, -count(*)
      FROM old_rows o
     GROUP BY o.job_id, o.node_id, o.task_type, o.state;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION mooncake_count_state_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_count_deltas (job_id, node_id, task_type, state, tasks)
    VALUES (NEW.job_id, NEW.node_id, NEW.task_type, NEW.state, 1);
    RETURN NULL;
END $$;
/* [jooq ignore stop] */

-- Task counts per (job, node, task type, state), kept as the tasks change (issue 19).
--
-- A scheduler pass needs, per placement, how many of its tasks of each type are in each state. It
-- counted them from the task rows: every row of the job (N nodes x K objects) on every pass, while
-- holding the job row that deferrals and failures wait for. At 1,000 followers x 256 objects that
-- was 0.32 s a pass (a hash aggregate; 0.94 s as the earlier sort), and a pass runs after every
-- notification of a finished task. Now the counts are kept here, as placement_bytes keeps bytes,
-- and a pass reads one row per (node, type, state) of the job: O(N).
--
-- Upkeep, in the same transaction as the change it counts:
--   * updates: a statement-level trigger adds +1 per new row and -1 per old row, grouped, so a
--     statement that changes no state (progress, lease renewal) nets zero and writes nothing;
--   * deletes (pruning, a job deleted by hand): the same with -1, on the existing rows;
--   * inserts: a row-level trigger for rows inserted with a payload (whole-model tasks, and any
--     task a tool or test inserts). Copies are inserted without a payload, only by the scheduler's
--     release statement (V004), up to a million at a time; it adds their counts itself, one row
--     per follower, since a transition table over such an insert costs more than the insert.
-- Counters are upserted in key order, so two statements that touch the same ones lock them in the
-- same order (no deadlock), as placement_bytes' upkeep does.
CREATE TABLE task_counts (
    job_id     varchar(128) NOT NULL,   -- no foreign key, as tasks have none since V004
    node_id    varchar(300) NOT NULL,
    task_type  varchar(32)  NOT NULL,
    state      varchar(16)  NOT NULL,
    tasks      bigint       NOT NULL,
    PRIMARY KEY (job_id, node_id, task_type, state)
);

/* [jooq ignore start] */
-- Updated by nearly every statement on tasks: room for HOT updates, vacuumed often.
ALTER TABLE task_counts SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
                             autovacuum_vacuum_cost_delay = 0);

CREATE FUNCTION mooncake_count_states_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counts AS c (job_id, node_id, task_type, state, tasks)
    SELECT d.job_id, d.node_id, d.task_type, d.state, sum(d.n)
      FROM (SELECT n.job_id, n.node_id, n.task_type, n.state, 1 AS n FROM new_rows n
            UNION ALL
            SELECT o.job_id, o.node_id, o.task_type, o.state, -1 FROM old_rows o) d
     GROUP BY d.job_id, d.node_id, d.task_type, d.state
    HAVING sum(d.n) <> 0
     ORDER BY d.job_id, d.node_id, d.task_type, d.state
    ON CONFLICT (job_id, node_id, task_type, state) DO UPDATE SET tasks = c.tasks + excluded.tasks;
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_count_states_update AFTER UPDATE ON tasks
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_count_states_updated();

CREATE FUNCTION mooncake_count_states_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE task_counts c SET tasks = c.tasks - d.n
      FROM (SELECT o.job_id, o.node_id, o.task_type, o.state, count(*) AS n
              FROM old_rows o
             GROUP BY o.job_id, o.node_id, o.task_type, o.state
             ORDER BY 1, 2, 3, 4) d
     WHERE c.job_id = d.job_id AND c.node_id = d.node_id AND c.task_type = d.task_type AND c.state = d.state;
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_count_states_delete AFTER DELETE ON tasks
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_count_states_deleted();

CREATE FUNCTION mooncake_count_state_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counts AS c (job_id, node_id, task_type, state, tasks)
    VALUES (NEW.job_id, NEW.node_id, NEW.task_type, NEW.state, 1)
    ON CONFLICT (job_id, node_id, task_type, state) DO UPDATE SET tasks = c.tasks + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER tasks_count_state_insert AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.payload IS NOT NULL)
    EXECUTE FUNCTION mooncake_count_state_inserted();

-- The tasks already there, so the counters start equal to what they stand for.
INSERT INTO task_counts (job_id, node_id, task_type, state, tasks)
SELECT t.job_id, t.node_id, t.task_type, t.state, count(*)
  FROM tasks t
 GROUP BY t.job_id, t.node_id, t.task_type, t.state;
/* [jooq ignore stop] */

-- A copy's success notifies the masters only when a pass has something to do about it (issue 19).
--
-- Every transaction that runs NOTIFY takes one database-wide lock at commit and holds it until
-- its commit record is flushed (PostgreSQL's async.c, PreCommit_Notify: queue entries must appear
-- in commit order), so notifying transactions commit one at a time, each waiting for its own WAL
-- flush, where others flush together. Every copy's success notified twice: 'mooncake_job' with the
-- job (tasks_notify_update: a task finished) and 'mooncake_job' '' (object_replicas_notify: a
-- replica was published). At 1,000 simulated nodes (bench/fleet.sh, session 25, pg_stat_activity
-- sampled every 2 s while the job ran) the wait for that lock ("Lock: object") was the most
-- frequent state of an active backend, ahead of running on a CPU: 79 against 70 backend samples,
-- and 17 of the pooler's 20 server connections at once in one sample, every one a success.
--
-- What a pass does about a copy's success: release the next object when a follower first holds a
-- released one (the release window), and move a placement on once its node holds every object.
-- Now:
--   * object_replicas: a published replica notifies only when its object has no release yet (the
--     seed publishing: the pass may release it) or a release still waiting for its first follower
--     replica (NOT follower_held, V022). A follower's replica of an object another follower already
--     held, most of them, does not. With one follower every replica is the first: such a job is
--     still carried by notifications alone (QueueWakeupTest).
--   * tasks: a succeeded REPLICA_COPY no longer notifies its job; a failed one and every other
--     finished task do, as before. A placement whose last copy succeeded moves on at the scheduler's
--     next tick (--scheduler-tick-ms, 500 ms by default), which evaluates every active job anyway;
--     at 1,000 nodes a pass per job already ran about every tick, notified or not (paced).
/* [jooq ignore start] */
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
    -- Jobs with a task that just finished, but for a copy's success (see above).
    PERFORM pg_notify('mooncake_job', j.job_id)
       FROM (SELECT DISTINCT c.job_id
               FROM (SELECT nr.task_id, nr.job_id, nr.state FROM new_rows nr
                      WHERE nr.state = 'failed' OR (nr.state = 'succeeded' AND nr.task_type <> 'REPLICA_COPY')
                     EXCEPT
                     SELECT o.task_id, o.job_id, o.state FROM old_rows o WHERE o.state IN ('succeeded', 'failed')) c) j;
    RETURN NULL;
END $$;

DROP TRIGGER object_replicas_notify ON object_replicas;
DROP FUNCTION mooncake_notify_replicas();

CREATE FUNCTION mooncake_notify_replicas() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A published object a pass may act on: not released yet, or released and waiting for its
    -- first follower replica. One notification per statement, as before.
    -- One probe of the object's releases: NULL when it has none, false when one still waits.
    PERFORM pg_notify('mooncake_job', '')
      WHERE EXISTS (SELECT 1 FROM new_rows n
                     WHERE (SELECT bool_and(c.follower_held) FROM copy_releases c
                             WHERE c.object_id = n.object_id) IS NOT TRUE);
    RETURN NULL;
END $$;

-- A trigger with a transition table fires for one event only: one for inserts, one for the updates
-- of a re-published replica (INSERT ... ON CONFLICT DO UPDATE).
CREATE TRIGGER object_replicas_notify AFTER INSERT ON object_replicas
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_notify_replicas();
CREATE TRIGGER object_replicas_notify_update AFTER UPDATE ON object_replicas
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_notify_replicas();
/* [jooq ignore stop] */

-- The releases of an object, whatever the job (the trigger above). The job id second, so the release
-- statement's probe of one release, by both keys, stays exact whichever index it takes
-- (ReleasePlanTest: with statistics of empty tables it took this one).
CREATE INDEX copy_releases_object_idx ON copy_releases (object_id, job_id);
